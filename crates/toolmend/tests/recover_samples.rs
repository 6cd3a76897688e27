//! Every example of GRAMMARS §2, through the public API: the whole-text scan recovers the
//! documented calls, and the stream gives the same calls and text for every split of the
//! sample at a char boundary (and fed char by char).

use serde_json::{Value, json};
use toolmend::ToolSet;
use toolmend::recover::recover_text;

#[path = "support/recover_stream.rs"]
mod recover_stream;
use recover_stream::stream;

fn tools() -> ToolSet {
    let string = json!({"type": "string"});
    let obj = |props: Value| json!({"type": "object", "properties": props});
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": obj(json!({"path": string, "limit": {"type": "integer"}}))},
        {"name": "write_file", "parameters": obj(json!({"path": string, "content": string, "overwrite": {"type": "boolean"}}))},
        {"name": "edit_file", "parameters": obj(json!({"path": string, "old_string": string, "new_string": string}))},
        {"name": "bash", "parameters": obj(json!({"command": string}))},
        {"name": "web_search", "parameters": obj(json!({"query": string, "max_results": {"type": "integer"}}))},
        {"name": "grep", "parameters": obj(json!({"pattern": string, "path": string, "max_count": {"type": "integer"}}))},
        {"name": "list_dir", "parameters": obj(json!({"path": string}))},
        {"name": "glob", "parameters": obj(json!({"pattern": string}))},
        {"name": "git_diff", "parameters": obj(json!({"ref": string}))},
        {"name": "run_tests", "parameters": obj(json!({"filter": string, "jobs": {"type": "integer"},
            "fail_fast": {"type": "boolean"}, "update": {"type": "boolean"}, "markers": {"type": "array"}}))},
    ]))
}

/// (family, sample, expected calls)
/// A sample: its family, its text, and the calls (name, arguments) it holds.
type Sample = (&'static str, &'static str, Vec<(&'static str, Value)>);

fn samples() -> Vec<Sample> {
    vec![
        (
            "deepseek",
            "Checking the lockfile.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"poetry.lock\", \"limit\": 40}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
            vec![("read_file", json!({"path": "poetry.lock", "limit": 40}))],
        ),
        (
            "deepseek",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>bash\n```json\n{\"command\": \"pip list --outdated\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>web_search\n```json\n{\"query\": \"pydantic v2 migration validators\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            vec![
                ("bash", json!({"command": "pip list --outdated"})),
                (
                    "web_search",
                    json!({"query": "pydantic v2 migration validators"}),
                ),
            ],
        ),
        (
            "deepseek",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>grep<｜tool▁sep｜>{\"pattern\": \"panic!\", \"path\": \"crates\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            vec![("grep", json!({"pattern": "panic!", "path": "crates"}))],
        ),
        (
            "deepseek",
            "Let me check both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \".env.example\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>list_dir<｜tool▁sep｜>{\"path\": \"config\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
            vec![
                ("read_file", json!({"path": ".env.example"})),
                ("list_dir", json!({"path": "config"})),
            ],
        ),
        (
            "dsml",
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"run_tests\">\n<｜DSML｜parameter name=\"filter\" string=\"true\">storage::compaction</｜DSML｜parameter>\n<｜DSML｜parameter name=\"jobs\" string=\"false\">4</｜DSML｜parameter>\n<｜DSML｜parameter name=\"fail_fast\" string=\"false\">true</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            vec![(
                "run_tests",
                json!({"filter": "storage::compaction", "jobs": 4, "fail_fast": true}),
            )],
        ),
        (
            "dsml",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">scripts/bump.sh</｜DSML｜parameter>\n<｜DSML｜parameter name=\"content\" string=\"true\">#!/bin/sh\nset -e\ncargo set-version --bump patch</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
            vec![(
                "write_file",
                json!({"path": "scripts/bump.sh", "content": "#!/bin/sh\nset -e\ncargo set-version --bump patch"}),
            )],
        ),
        (
            "dsml",
            "<｜｜DSML｜｜tool_calls>\n<｜｜DSML｜｜invoke name=\"glob\">\n{\"pattern\": \"src/**/*.vue\"}\n</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>",
            vec![("glob", json!({"pattern": "src/**/*.vue"}))],
        ),
        (
            "hermes",
            "<tool_call>\n{\"name\": \"list_dir\", \"arguments\": {\"path\": \"packages/ui/src\"}}\n</tool_call>",
            vec![("list_dir", json!({"path": "packages/ui/src"}))],
        ),
        (
            "hermes",
            "Both files are needed.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"vite.config.ts\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"tailwind.config.js\"}}\n</tool_call>",
            vec![
                ("read_file", json!({"path": "vite.config.ts"})),
                ("read_file", json!({"path": "tailwind.config.js"})),
            ],
        ),
        (
            "hermes",
            "<tool_call>{\"name\": \"edit_file\", \"arguments\": \"{\\\"path\\\": \\\"go.sum\\\", \\\"old_string\\\": \\\"v1.2.0\\\", \\\"new_string\\\": \\\"v1.3.1\\\"}\"}</tool_call>",
            vec![(
                "edit_file",
                json!({"path": "go.sum", "old_string": "v1.2.0", "new_string": "v1.3.1"}),
            )],
        ),
        (
            "qwen3_coder",
            "<tool_call>\n<function=bash>\n<parameter=command>\npnpm --filter web test -- --run\n</parameter>\n</function>\n</tool_call>",
            vec![(
                "bash",
                json!({"command": "pnpm --filter web test -- --run"}),
            )],
        ),
        (
            "qwen3_coder",
            "<tool_call>\n<function=edit_file>\n<parameter=path>\nlib/src/parse.rs\n</parameter>\n<parameter=old_string>\n    let n: usize = s.parse().unwrap();\n</parameter>\n<parameter=new_string>\n    let n: usize = s.parse().map_err(Error::BadCount)?;\n</parameter>\n</function>\n</tool_call>",
            vec![(
                "edit_file",
                json!({"path": "lib/src/parse.rs", "old_string": "    let n: usize = s.parse().unwrap();", "new_string": "    let n: usize = s.parse().map_err(Error::BadCount)?;"}),
            )],
        ),
        (
            "glm",
            "<tool_call>web_search\n<arg_key>query</arg_key>\n<arg_value>sveltekit form actions progressive enhancement</arg_value>\n</tool_call>",
            vec![(
                "web_search",
                json!({"query": "sveltekit form actions progressive enhancement"}),
            )],
        ),
        (
            "glm",
            "<tool_call>read_file<arg_key>path</arg_key><arg_value>src/routes/+page.svelte</arg_value></tool_call><tool_call>git_diff</tool_call>",
            vec![
                ("read_file", json!({"path": "src/routes/+page.svelte"})),
                ("git_diff", json!({})),
            ],
        ),
        (
            "kimi_k2",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.run_tests:4<|tool_call_argument_begin|>{\"filter\": \"snapshot\", \"update\": true}<|tool_call_end|><|tool_calls_section_end|>",
            vec![("run_tests", json!({"filter": "snapshot", "update": true}))],
        ),
        (
            "kimi_k2",
            "Both at once.<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.glob:5<|tool_call_argument_begin|>{\"pattern\": \"**/*.snap\"}<|tool_call_end|>\n<|tool_call_begin|>functions.bash:6<|tool_call_argument_begin|>{\"command\": \"git status --porcelain\"}<|tool_call_end|>\n<|tool_calls_section_end|>",
            vec![
                ("glob", json!({"pattern": "**/*.snap"})),
                ("bash", json!({"command": "git status --porcelain"})),
            ],
        ),
        (
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"grep\" index=\"1\"<|sep|><|open|>argument key=\"pattern\" type=\"string\"<|sep|>TODO\\(perf\\)<|close|>argument<|sep|><|open|>argument key=\"max_count\" type=\"integer\"<|sep|>25<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            vec![(
                "grep",
                json!({"pattern": "TODO\\(perf\\)", "max_count": 25}),
            )],
        ),
        (
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"list_dir\" index=\"2\"<|sep|><|open|>argument key=\"path\" type=\"string\"<|sep|>proto<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            vec![("list_dir", json!({"path": "proto"}))],
        ),
        (
            "mistral",
            "[TOOL_CALLS] [{\"name\": \"bash\", \"arguments\": {\"command\": \"tox -e py312\"}, \"id\": \"Ab3dE9gH1\"}]",
            vec![("bash", json!({"command": "tox -e py312"}))],
        ),
        (
            "mistral",
            "[TOOL_CALLS][{\"name\": \"grep\", \"arguments\": {\"pattern\": \"import torch\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"requirements.txt\"}}]",
            vec![
                ("grep", json!({"pattern": "import torch"})),
                ("read_file", json!({"path": "requirements.txt"})),
            ],
        ),
        (
            "mistral",
            "[TOOL_CALLS]glob[ARGS]{\"pattern\": \"src/**/*.kt\"}[TOOL_CALLS]read_file[ARGS]{\"path\": \"build.gradle.kts\"}",
            vec![
                ("glob", json!({"pattern": "src/**/*.kt"})),
                ("read_file", json!({"path": "build.gradle.kts"})),
            ],
        ),
        (
            "mistral",
            "[THINK]The user wants the failing assertion; run only that test.[/THINK][TOOL_CALLS]run_tests[CALL_ID]Zq81LmN0p[ARGS]{\"filter\": \"test_refund_rounding\"}",
            vec![("run_tests", json!({"filter": "test_refund_rounding"}))],
        ),
        (
            "llama",
            "<|python_tag|>{\"name\": \"bash\", \"parameters\": {\"command\": \"ruff check --fix .\"}}",
            vec![("bash", json!({"command": "ruff check --fix ."}))],
        ),
        (
            "llama",
            "{\"name\": \"web_search\", \"parameters\": {\"query\": \"uv workspace dependency groups\"}}",
            vec![(
                "web_search",
                json!({"query": "uv workspace dependency groups"}),
            )],
        ),
        (
            "pythonic",
            "[list_dir(path='k8s/overlays/prod'), read_file(path='k8s/overlays/prod/kustomization.yaml')]",
            vec![
                ("list_dir", json!({"path": "k8s/overlays/prod"})),
                (
                    "read_file",
                    json!({"path": "k8s/overlays/prod/kustomization.yaml"}),
                ),
            ],
        ),
        (
            "pythonic",
            "<|tool_call_start|>[web_search(query=\"helm chart hooks order\", max_results=3)]<|tool_call_end|>Looking that up.",
            vec![(
                "web_search",
                json!({"query": "helm chart hooks order", "max_results": 3}),
            )],
        ),
        (
            "olmo3",
            "<function_calls>\ngrep(pattern=\"@deprecated\", path=\"src\")\ngit_diff(ref=\"origin/main\")\n</function_calls>",
            vec![
                ("grep", json!({"pattern": "@deprecated", "path": "src"})),
                ("git_diff", json!({"ref": "origin/main"})),
            ],
        ),
        (
            "olmo3",
            "<function_calls>\nwrite_file(path=\"out/summary.json\", content=\"{}\", overwrite=false)\n</function_calls>",
            vec![(
                "write_file",
                json!({"path": "out/summary.json", "content": "{}", "overwrite": false}),
            )],
        ),
        (
            "anthropic",
            "<function_calls>\n<invoke name=\"glob\">\n<parameter name=\"pattern\">**/Dockerfile*</parameter>\n</invoke>\n</function_calls>",
            vec![("glob", json!({"pattern": "**/Dockerfile*"}))],
        ),
        (
            "anthropic",
            "Checking the compose file and the env template.\n<function_calls>\n<invoke name=\"read_file\">\n<parameter name=\"path\">compose.yaml</parameter>\n</invoke>\n<invoke name=\"read_file\">\n<parameter name=\"path\">.env.sample</parameter>\n</invoke>\n</function_calls>",
            vec![
                ("read_file", json!({"path": "compose.yaml"})),
                ("read_file", json!({"path": ".env.sample"})),
            ],
        ),
        (
            "minimax_m2",
            "<minimax:tool_call>\n<invoke name=\"bash\">\n<parameter name=\"command\">poetry run alembic upgrade head</parameter>\n</invoke>\n</minimax:tool_call>",
            vec![(
                "bash",
                json!({"command": "poetry run alembic upgrade head"}),
            )],
        ),
        (
            "minimax_m2",
            "<minimax:tool_call>\n<invoke name=\"edit_file\">\n<parameter name=\"path\">app/routes.py</parameter>\n<parameter name=\"old_string\">@app.get(\"/health\")</parameter>\n<parameter name=\"new_string\">@app.get(\"/healthz\")</parameter>\n</invoke>\n</minimax:tool_call>",
            vec![(
                "edit_file",
                json!({"path": "app/routes.py", "old_string": "@app.get(\"/health\")", "new_string": "@app.get(\"/healthz\")"}),
            )],
        ),
        (
            "minimax_m1",
            "<tool_calls>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"notebooks/eda.ipynb\"}}\n</tool_calls>",
            vec![("read_file", json!({"path": "notebooks/eda.ipynb"}))],
        ),
        (
            "minimax_m3",
            "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"grep\">\n]<]minimax[>[<pattern>GenServer.call]<]minimax[>[</pattern>\n]<]minimax[>[<path>lib]<]minimax[>[</path>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
            vec![("grep", json!({"pattern": "GenServer.call", "path": "lib"}))],
        ),
        (
            "harmony",
            "<|channel|>analysis<|message|>The user wants the route table.<|end|><|start|>assistant<|channel|>commentary to=functions.grep <|constrain|>json<|message|>{\"pattern\":\"router\\\\.(get|post)\",\"path\":\"server\"}<|call|>",
            vec![(
                "grep",
                json!({"pattern": "router\\.(get|post)", "path": "server"}),
            )],
        ),
        (
            "harmony",
            "<|start|>assistant to=functions.read_file<|channel|>commentary json<|message|>{\"path\":\"server/index.js\",\"limit\":50}<|call|>",
            vec![("read_file", json!({"path": "server/index.js", "limit": 50}))],
        ),
        (
            "granite",
            "<|tool_call|>[{\"name\": \"list_dir\", \"arguments\": {\"path\": \"ansible/roles\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"ansible/site.yml\"}}]",
            vec![
                ("list_dir", json!({"path": "ansible/roles"})),
                ("read_file", json!({"path": "ansible/site.yml"})),
            ],
        ),
        (
            "granite",
            "<tool_call>[{\"name\": \"bash\", \"arguments\": {\"command\": \"ansible-lint\"}}]",
            vec![("bash", json!({"command": "ansible-lint"}))],
        ),
        (
            "phi4",
            "functools[{\"name\": \"grep\", \"arguments\": {\"pattern\": \"\\\\bFIXME\\\\b\"}}]",
            vec![("grep", json!({"pattern": "\\bFIXME\\b"}))],
        ),
        (
            "phi4",
            "functools[{\"name\": \"run_tests\", \"arguments\": {\"markers\": [\"slow\", \"db\"]}}, {\"name\": \"git_diff\", \"arguments\": {}}]",
            vec![
                ("run_tests", json!({"markers": ["slow", "db"]})),
                ("git_diff", json!({})),
            ],
        ),
        (
            "xlam",
            "[{\"name\": \"web_search\", \"arguments\": {\"query\": \"otel collector tail sampling\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"otel/collector.yaml\"}}]",
            vec![
                (
                    "web_search",
                    json!({"query": "otel collector tail sampling"}),
                ),
                ("read_file", json!({"path": "otel/collector.yaml"})),
            ],
        ),
        (
            "hunyuan",
            "<tool_calls>[{\"name\": \"web_search\", \"arguments\": {\"query\": \"tencent cos multipart upload limits\"}}]</tool_calls>",
            vec![(
                "web_search",
                json!({"query": "tencent cos multipart upload limits"}),
            )],
        ),
        (
            "hunyuan",
            "<tool_calls><tool_call>read_file<tool_sep><arg_key>path</arg_key><arg_value>deploy/values-prod.yaml</arg_value></tool_call><tool_call>list_dir<tool_sep><arg_key>path</arg_key><arg_value>deploy</arg_value></tool_call></tool_calls>",
            vec![
                ("read_file", json!({"path": "deploy/values-prod.yaml"})),
                ("list_dir", json!({"path": "deploy"})),
            ],
        ),
        (
            "seed_oss",
            "<seed:tool_call>\n<function=grep>\n<parameter=pattern>unsafe impl Send</parameter>\n<parameter=path>src</parameter>\n</function>\n</seed:tool_call>",
            vec![(
                "grep",
                json!({"pattern": "unsafe impl Send", "path": "src"}),
            )],
        ),
        (
            "seed_oss",
            "<seed:think>Need the CI config.</seed:think><seed:tool_call>\n<function=read_file>\n<parameter=path>.gitlab-ci.yml</parameter>\n</function>\n</seed:tool_call>",
            vec![("read_file", json!({"path": ".gitlab-ci.yml"}))],
        ),
        (
            "step3",
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"bash\"><steptml:parameter name=\"command\">nvidia-smi --query-gpu=name --format=csv</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            vec![(
                "bash",
                json!({"command": "nvidia-smi --query-gpu=name --format=csv"}),
            )],
        ),
        (
            "hermes",
            "Need the changelog.\n</think>\n\n\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"CHANGES.rst\"}}\n</tool_call>",
            vec![("read_file", json!({"path": "CHANGES.rst"}))],
        ),
        (
            "gemma",
            "<|tool_call>call:bash{command:<|\"|>flutter analyze<|\"|>}<tool_call|>",
            vec![("bash", json!({"command": "flutter analyze"}))],
        ),
        (
            "gemma",
            "<start_function_call>call:read_file{path:<escape>lib/main.dart<escape>}<end_function_call>",
            vec![("read_file", json!({"path": "lib/main.dart"}))],
        ),
        (
            "cohere",
            "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"web_search\", \"parameters\": {\"query\": \"cohere rerank v3 latency\"}}]<|END_ACTION|>",
            vec![("web_search", json!({"query": "cohere rerank v3 latency"}))],
        ),
        (
            "apertus",
            "<|tools_prefix|>[{\"grep\": {\"pattern\": \"def test_\"}}, {\"list_dir\": {\"path\": \"tests\"}}]<|tools_suffix|>",
            vec![
                ("grep", json!({"pattern": "def test_"})),
                ("list_dir", json!({"path": "tests"})),
            ],
        ),
        (
            "internlm",
            "<|action_start|><|plugin|>\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"configs/train.yaml\"}}<|action_end|>",
            vec![("read_file", json!({"path": "configs/train.yaml"}))],
        ),
        (
            "gigachat",
            "function call<|role_sep|>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"df -h\"}}",
            vec![("bash", json!({"command": "df -h"}))],
        ),
        (
            "hunyuan",
            "<tool_calls:opensource>\n<tool_call:opensource>read_file<tool_sep:opensource>\n<arg_key:opensource>path</arg_key:opensource>\n<arg_value:opensource>deploy/values-prod.yaml</arg_value:opensource>\n<arg_key:opensource>limit</arg_key:opensource>\n<arg_value:opensource>40</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
            vec![(
                "read_file",
                json!({"path": "deploy/values-prod.yaml", "limit": 40}),
            )],
        ),
        (
            "solar_open",
            "<|tool_calls|><|tool_call:begin|>a1b2c3d4e5<|tool_call:name|>read_file<|tool_call:args|>{\"path\": \"pom.xml\"}<|tool_call:end|><|tool_call:begin|>k9x8w7v6u5<|tool_call:name|>bash<|tool_call:args|>{\"command\": \"mvn -q test\"}<|tool_call:end|><|calls|>",
            vec![
                ("read_file", json!({"path": "pom.xml"})),
                ("bash", json!({"command": "mvn -q test"})),
            ],
        ),
    ]
}

#[test]
fn every_grammars_sample_is_recovered_with_its_family() {
    let tools = tools();
    for (family, text, expected) in samples() {
        let found = recover_text(text, &tools, 16);
        let got: Vec<(&str, Value)> = found
            .calls
            .iter()
            .map(|c| (c.name.as_str(), serde_json::from_str(&c.arguments).unwrap()))
            .collect();
        assert_eq!(got, expected, "{family}: {text:?}");
        assert!(
            found.calls.iter().all(|c| c.family == family),
            "{family}: {:?}",
            found.calls
        );
        for call in &found.calls {
            assert!(
                !found.text.contains(&text[call.span.clone()]),
                "{family}: markup left in {:?}",
                found.text
            );
        }
    }
}

#[test]
fn every_split_of_every_sample_streams_the_same_calls_and_text() {
    let tools = tools();
    for (family, text, _) in samples() {
        let whole = recover_text(text, &tools, 16);
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        for &cut in &bounds {
            assert_eq!(
                stream(&tools, &[&text[..cut], &text[cut..]]),
                whole,
                "{family}: split at {cut}"
            );
        }
        let chars: Vec<&str> = bounds.windows(2).map(|w| &text[w[0]..w[1]]).collect();
        assert_eq!(stream(&tools, &chars), whole, "{family}: char by char");
    }
}

#[test]
fn the_text_keeps_everything_but_the_consumed_markup() {
    let tools = tools();
    for (family, text, _) in samples() {
        let found = recover_text(text, &tools, 16);
        // Rebuild the input from the remaining text and the consumed spans, in order.
        let mut spans: Vec<_> = found.calls.iter().map(|c| c.span.clone()).collect();
        spans.dedup();
        let mut rebuilt = String::new();
        let (mut at, mut rest) = (0, found.text.as_str());
        for span in spans {
            let kept = span.start - at;
            rebuilt.push_str(&rest[..kept]);
            rest = &rest[kept..];
            rebuilt.push_str(&text[span.clone()]);
            at = span.end;
        }
        rebuilt.push_str(rest);
        assert_eq!(rebuilt, text, "{family}");
    }
}
