//! Growth ratios: every stage timed on adversarial shapes at size n and 10n, in one process.
//!
//! Linear work means ×10 input → ×10 time; the check allows ×12 (noise, cache effects). For
//! the streaming recoverer it also times the streamed text against the whole-text scan of the
//! same text, in chunks of 1 to 7 bytes, 64 bytes and 4 KB, next to a floor measured alongside
//! (the same chunks appended to a `String`): at most ×3 the whole-text scan for 4 KB chunks, at
//! most ×3 the whole-text scan plus the floor for 1–7 B and 64 B chunks (a call and an append per
//! chunk of a few bytes can cost more than a memchr-speed scan of the whole text). `streamed`
//! uses `push_into` with one reused output; `push` (a new output per chunk) is shown beside it.
//! Timings are the best of several rounds of a batch sized to take a few milliseconds, so a load
//! change on a shared machine shows up as noise, not as a trend; the works of one streamed row
//! (whole, floor, streamed, push: each well under a scheduler time slice) are timed in turn
//! within each round, so a load change hits them alike.
//!
//! Wall time on a shared machine moves with other processes' load, so `--counts` adds what does
//! not: each growth row is run once at n and once at 10n in a child process under valgrind's
//! callgrind (`valgrind` must be installed; a few minutes for every row), which counts the
//! instructions executed inside the run (the allocator's included), the calls to `malloc` and
//! friends, and the data accesses that miss a simulated 32 KB L1 and a 512 KB last level (this
//! VM's per-core L2). With `--counts` the verdict is the instruction growth, at most ×11: linear
//! code does ×10 the work for ×10 the input, plus what rounds sizes up to powers of two (a
//! vector or hash table of 1 000 entries has 1 024 or 2 048 slots, of 10 000 has 16 384: its
//! growth copies and rehashes ×8–16, a few per cent of a row), and fixed costs only pull the
//! ratio under 10. A quadratic step of even 1 % of the work at n would add ×0.9 at 10n (an
//! n log n one, a sorted map of 1 000 → 10 000 keys, ×1.3 on its share). A row whose time grows
//! over ×12 while its instructions stay within ×11 is marked "time only": the same work, each
//! instruction slower at 10n; the misses per thousand instructions (n → 10n) show when that is
//! the data outgrowing a cache.
//!
//! Run with `cargo run --release -p toolmend --example growth_ratio` (`-- --quick` for one
//! round; `-- --counts` for the counts and their verdict; `-- WORD` for the rows whose stage or
//! shape contains WORD). Exits 1 when a ratio is over its limit.

// An example program reports on stdout.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolmend::recover::{StreamOutput, StreamRecoverer, recover_text};
use toolmend::salvage::{SalvageOptions, salvage};
use toolmend::{Mender, PrepareOptions, ToolSet, prepare_tools};

/// Largest allowed t(10n) / t(n).
const MAX_GROWTH: f64 = 12.0;
/// Largest allowed instructions(10n) / instructions(n) (see the module comment).
const MAX_COUNT_GROWTH: f64 = 11.0;
/// Largest allowed streamed / whole-text time at the same size.
const MAX_STREAM_OVER_WHOLE: f64 = 3.0;

/// One stage on one shape: builds its input for a size, returns the work to time.
struct Case {
    stage: &'static str,
    shape: &'static str,
    /// The small size n (the large one is 10n).
    n: usize,
    make: fn(usize) -> Box<dyn Fn()>,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, index, size] = args.as_slice()
        && flag == CHILD_FLAG
    {
        return child(index, size);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let counting = args.iter().any(|a| a == "--counts");
    let filter = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .cloned()
        .unwrap_or_default();
    let rounds = if quick { 1 } else { 5 };
    let mut failed = false;
    let mut time_only_over = 0;
    print!(
        "{:<10} {:<34} {:>8} {:>12} {:>12} {:>7}",
        "stage", "shape", "n", "t(n)", "t(10n)", "time"
    );
    if counting {
        print!(
            " {:>12} {:>7} {:>7} {:>13} {:>11}",
            "instr(10n)", "instr", "allocs", "L1 miss/ki", "L2 miss/ki"
        );
    }
    println!();
    for (index, case) in cases().iter().enumerate() {
        if !(case.stage.contains(&filter) || case.shape.contains(&filter)) {
            continue;
        }
        let small = time((case.make)(case.n), rounds);
        let large = time((case.make)(case.n * 10), rounds);
        let ratio = large.as_secs_f64() / small.as_secs_f64();
        print!(
            "{:<10} {:<34} {:>8} {:>12} {:>12} {:>7.1}",
            case.stage,
            case.shape,
            case.n,
            show(small),
            show(large),
            ratio,
        );
        // The verdict: the instruction count when it was measured (the same on any load);
        // the time otherwise.
        let over = if counting {
            match (count(index, case.n), count(index, case.n * 10)) {
                (Ok(small), Ok(large)) => {
                    let instructions = large.instructions as f64 / small.instructions as f64;
                    // Misses per thousand instructions at n and at 10n: where they rise, each
                    // instruction waits longer at 10n, and time grows faster than the count.
                    let per_k = |c: &Counts, misses: u64| {
                        misses as f64 * 1000.0 / c.instructions.max(1) as f64
                    };
                    print!(
                        " {:>12} {:>7.2} {:>7.2} {:>5.1} → {:>5.1} {:>4.1} → {:>4.1}",
                        large.instructions,
                        instructions,
                        large.allocations as f64 / small.allocations.max(1) as f64,
                        per_k(&small, small.l1_misses),
                        per_k(&large, large.l1_misses),
                        per_k(&small, small.cache_misses),
                        per_k(&large, large.cache_misses),
                    );
                    if ratio > MAX_GROWTH && instructions <= MAX_COUNT_GROWTH {
                        time_only_over += 1;
                        print!("  (time only)");
                    }
                    instructions > MAX_COUNT_GROWTH
                }
                (Err(why), _) | (_, Err(why)) => {
                    println!("\n  cannot count: {why}");
                    return ExitCode::FAILURE;
                }
            }
        } else {
            ratio > MAX_GROWTH
        };
        failed |= over;
        println!("{}", if over { "  OVER" } else { "" });
    }
    if time_only_over > 0 {
        println!(
            "\n{time_only_over} row(s) grew over ×{MAX_GROWTH} in time with instructions within ×{MAX_COUNT_GROWTH}: \
             the same work, slower per instruction at 10n (cache, allocator, load)"
        );
    }
    println!();
    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>10} {:>7}",
        "streamed vs whole (push_into)",
        "chunks",
        "whole",
        "floor",
        "streamed",
        "s/w",
        "s/(w+f)",
        "push",
        "p/w"
    );
    for (shape, unit) in RUNS {
        if !("stream".contains(&filter) || shape.contains(&filter)) {
            continue;
        }
        let text = run_text(shape, unit, 200_000);
        for chunking in CHUNKINGS {
            let works = [
                whole_scan(text.clone()),
                append_floor(text.clone(), chunking),
                stream_into(text.clone(), chunking),
                stream_push(text.clone(), chunking),
            ];
            let [whole, floor, streamed, pushed] = time_together(&works, rounds * 4);
            let (over_whole, over_both) = (streamed / whole, streamed / (whole + floor));
            // Chunks of up to 64 bytes cost a call and an append each, which alone may exceed
            // 3× a memchr-speed scan; there the bound is against the scan plus that floor.
            let over = match chunking {
                Chunking::Fixed(n) if n >= 1024 => over_whole > MAX_STREAM_OVER_WHOLE,
                _ => over_both > MAX_STREAM_OVER_WHOLE,
            };
            failed |= over;
            println!(
                "{:<34} {:>6} {:>10} {:>10} {:>10} {:>7.1} {:>7.1} {:>10} {:>7.1}{}",
                shape,
                chunking.name(),
                show_secs(whole),
                show_secs(floor),
                show_secs(streamed),
                over_whole,
                over_both,
                show_secs(pushed),
                pushed / whole,
                if over { "  OVER" } else { "" }
            );
        }
    }
    if failed {
        println!(
            "\nsome ratio is over its limit (time growth ≤ {MAX_GROWTH}, or with --counts \
             instruction growth ≤ {MAX_COUNT_GROWTH}; stream/whole ≤ {MAX_STREAM_OVER_WHOLE})"
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The argument that makes this program run one case once for [`count`].
const CHILD_FLAG: &str = "--count-child";
/// The function whose inside callgrind counts (`--toggle-collect`).
const COUNTED: &str = "growth_ratio_counted_region";

/// What one run of a case costs, counted by callgrind: the same on any load.
#[derive(Debug, Clone, Copy)]
struct Counts {
    /// Instructions executed (callgrind's `Ir`), the allocator's included.
    instructions: u64,
    /// Calls to `malloc`, `calloc`, `realloc` and the aligned allocators.
    allocations: u64,
    /// Data reads and writes that miss the simulated first-level cache (`D1mr + D1mw`).
    l1_misses: u64,
    /// Data reads and writes that miss the simulated last-level cache (`DLmr + DLmw`).
    cache_misses: u64,
}

/// Counts one run of case `index` at `size`: runs this program under `valgrind --tool=callgrind`
/// with [`CHILD_FLAG`], which builds the input, runs the work once to warm it (lazy statics,
/// per-tool caches, as the timed rounds are), then once inside [`counted_region`], the only
/// function whose cost callgrind collects.
fn count(index: usize, size: usize) -> Result<Counts, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::env::temp_dir().join(format!(
        "growth_ratio.{}.{index}.{size}.callgrind",
        std::process::id()
    ));
    let run = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--cache-sim=yes")
        // The last level simulated is this VM's per-core L2 (512 KB, 8-way): the data of most
        // rows fits in it at n and not at 10n.
        .arg("--LL=524288,8,64")
        .arg(format!("--toggle-collect=*{COUNTED}*"))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .args([CHILD_FLAG, &index.to_string(), &size.to_string()])
        .output()
        .map_err(|e| format!("valgrind: {e} (install valgrind, or run without --counts)"))?;
    let profile = std::fs::read_to_string(&out);
    let _ = std::fs::remove_file(&out);
    if !run.status.success() {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(format!("valgrind failed: {}", tail.join(" / ")));
    }
    let profile = profile.map_err(|e| format!("callgrind output: {e}"))?;
    parse_callgrind(&profile).ok_or_else(|| "callgrind output without totals".to_owned())
}

/// Reads the totals and the allocation calls out of a callgrind profile.
fn parse_callgrind(profile: &str) -> Option<Counts> {
    let mut events: Vec<&str> = Vec::new();
    let mut totals: Vec<u64> = Vec::new();
    // Callgrind names a function once as `(id) name`, then by `(id)` alone.
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let (mut caller, mut callee) = ("", "");
    let mut allocations = 0;
    for line in profile.lines() {
        if let Some(list) = line.strip_prefix("events:") {
            events = list.split_whitespace().collect();
        } else if let Some(list) = line
            .strip_prefix("totals:")
            .or(line.strip_prefix("summary:"))
        {
            totals = list
                .split_whitespace()
                .map(|n| n.parse().unwrap_or(0))
                .collect();
        } else if let Some(field) = line.strip_prefix("fn=") {
            caller = resolve(&mut names, field);
        } else if let Some(field) = line.strip_prefix("cfn=") {
            callee = resolve(&mut names, field);
        } else if let Some(calls) = line.strip_prefix("calls=") {
            if is_allocator(callee) && !is_allocator(caller) {
                allocations += calls
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    let event = |name: &str| {
        events
            .iter()
            .position(|e| *e == name)
            .and_then(|i| totals.get(i).copied())
    };
    Some(Counts {
        instructions: event("Ir")?,
        allocations,
        l1_misses: event("D1mr").unwrap_or(0) + event("D1mw").unwrap_or(0),
        cache_misses: event("DLmr").unwrap_or(0) + event("DLmw").unwrap_or(0),
    })
}

/// The name a callgrind `fn=`/`cfn=` field stands for, remembering `(id) name` definitions.
fn resolve<'a>(names: &mut std::collections::HashMap<&'a str, &'a str>, field: &'a str) -> &'a str {
    match field.split_once(' ') {
        Some((id, name)) if id.starts_with('(') => {
            names.insert(id, name);
            name
        }
        _ => names.get(field).copied().unwrap_or(field),
    }
}

/// Whether a function is one of the C allocator's entry points.
fn is_allocator(name: &str) -> bool {
    let name = name.trim_start_matches("__libc_");
    matches!(
        name,
        "malloc" | "calloc" | "realloc" | "posix_memalign" | "aligned_alloc" | "memalign"
    )
}

/// Builds case `index` at `size`, runs it once to warm it, then once in [`counted_region`].
fn child(index: &str, size: &str) -> ExitCode {
    let (Ok(index), Ok(size)) = (index.parse::<usize>(), size.parse::<usize>()) else {
        return ExitCode::FAILURE;
    };
    let Some(case) = cases().into_iter().nth(index) else {
        return ExitCode::FAILURE;
    };
    let work = (case.make)(size);
    work();
    growth_ratio_counted_region(&*work);
    ExitCode::SUCCESS
}

/// The one run callgrind counts (named by [`COUNTED`]; never inlined, so it has a symbol).
#[inline(never)]
fn growth_ratio_counted_region(work: &dyn Fn()) {
    work();
}

/// The best per-run times (seconds) of `works` over `rounds` rounds, each round a short batch
/// of every work in turn: a load change on a shared machine hits all of them alike, and a
/// batch of a few milliseconds often runs unpreempted.
fn time_together<const N: usize>(works: &[Box<dyn Fn()>; N], rounds: usize) -> [f64; N] {
    let batches = works.each_ref().map(|work| {
        let start = Instant::now();
        work();
        let once = start.elapsed().max(Duration::from_nanos(100));
        let batch = (Duration::from_millis(4).as_nanos() / once.as_nanos()).clamp(1, 100_000);
        u32::try_from(batch).unwrap_or(u32::MAX)
    });
    let mut best = [f64::INFINITY; N];
    for _ in 0..rounds {
        for ((work, &batch), best) in works.iter().zip(&batches).zip(&mut best) {
            let start = Instant::now();
            for _ in 0..batch {
                work();
            }
            *best = best.min(start.elapsed().as_secs_f64() / f64::from(batch));
        }
    }
    best
}

/// The best per-run time over `rounds` rounds, each a batch of at least 20 ms.
fn time(work: Box<dyn Fn()>, rounds: usize) -> Duration {
    let start = Instant::now();
    work();
    let once = start.elapsed().max(Duration::from_nanos(100));
    let batch = (Duration::from_millis(20).as_nanos() / once.as_nanos()).clamp(1, 100_000);
    let batch = u32::try_from(batch).unwrap_or(u32::MAX);
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                work();
            }
            start.elapsed() / batch
        })
        .min()
        .unwrap_or(once)
}

fn show_secs(secs: f64) -> String {
    show(Duration::from_secs_f64(secs))
}

fn show(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// Runs of one unit that the streaming recoverer once re-read per chunk.
const RUNS: [(&str, &str); 6] = [
    ("spaces", " "),
    ("newlines", "\n"),
    ("backticks", "`"),
    ("span then spaces (`x + blanks)", " "),
    ("fence then one long line", " "),
    ("tildes", "~"),
];

fn tools() -> ToolSet {
    ToolSet::from_json(&json!([
        {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
    ]))
}

/// The adversarial text for one of [`RUNS`] at `n` bytes.
fn run_text(shape: &str, unit: &str, n: usize) -> String {
    let body = unit.repeat(n);
    match shape {
        "span then spaces (`x + blanks)" => format!("`x\n{body}"),
        "fence then one long line" => format!("```\n{body}"),
        _ => body,
    }
}

fn whole_scan(text: String) -> Box<dyn Fn()> {
    let tools = tools();
    Box::new(move || {
        black_box(recover_text(black_box(&text), &tools, 16));
    })
}

/// How a text is cut into chunks.
#[derive(Debug, Clone, Copy)]
enum Chunking {
    /// 1, 2, …, 7, 1, 2, … bytes (a token or two per chunk).
    Cycle,
    /// Chunks of this many bytes (SSE events that carry several tokens).
    Fixed(usize),
}

/// The chunkings of the streamed-vs-whole table.
const CHUNKINGS: [Chunking; 3] = [Chunking::Cycle, Chunking::Fixed(64), Chunking::Fixed(4096)];

impl Chunking {
    fn name(self) -> String {
        match self {
            Self::Cycle => "1–7 B".to_owned(),
            Self::Fixed(n) if n >= 1024 => format!("{} KB", n / 1024),
            Self::Fixed(n) => format!("{n} B"),
        }
    }

    /// Calls `each` with the chunks of `text` in order (cuts moved forward to char boundaries).
    fn each(self, text: &str, mut each: impl FnMut(&str)) {
        let mut at = 0;
        let mut size = match self {
            Self::Cycle => 1,
            Self::Fixed(n) => n,
        };
        while at < text.len() {
            let mut end = (at + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            each(&text[at..end]);
            at = end;
            if let Self::Cycle = self {
                size = size % 7 + 1;
            }
        }
    }
}

/// The 1–7 B stream with [`StreamRecoverer::push`] (the growth rows).
fn stream_scan(text: String) -> Box<dyn Fn()> {
    stream_push(text, Chunking::Cycle)
}

/// The stream with [`StreamRecoverer::push`]: a new output per chunk.
fn stream_push(text: String, chunking: Chunking) -> Box<dyn Fn()> {
    let tools = tools();
    Box::new(move || {
        let mut stream = StreamRecoverer::new(16);
        chunking.each(&text, |chunk| {
            black_box(stream.push(&tools, black_box(chunk)));
        });
        black_box(stream.finish(&tools));
    })
}

/// The stream with [`StreamRecoverer::push_into`]: one output, forwarded and cleared per chunk
/// as a proxy writing each chunk's text to its client would.
fn stream_into(text: String, chunking: Chunking) -> Box<dyn Fn()> {
    let tools = tools();
    Box::new(move || {
        let mut stream = StreamRecoverer::new(16);
        let mut out = StreamOutput::default();
        chunking.each(&text, |chunk| {
            stream.push_into(&tools, black_box(chunk), &mut out);
            black_box(&out);
            out.text.clear();
            out.calls.clear();
        });
        black_box(stream.finish(&tools));
    })
}

/// The floor under any push-based recoverer: the same chunks appended to a `String` (what a
/// caller keeping the streamed text pays, and what the recoverer itself does per chunk).
fn append_floor(text: String, chunking: Chunking) -> Box<dyn Fn()> {
    Box::new(move || {
        let mut kept = String::new();
        chunking.each(&text, |chunk| kept.push_str(black_box(chunk)));
        black_box(kept);
    })
}

/// A tool whose object has `n` properties `key_<i>` of `kind`, the first `required` of them
/// required.
///
/// Every name and number in the inputs has six digits (`key_000042`), so that 10n members are
/// ×10 bytes: with `key_42` the names grow a digit from n to 10n, and work per byte of a name
/// (hashing) showed as growth faster than linear (×11.2 instructions for ×10 members).
fn wide_tool(n: usize, kind: &str, required: usize) -> ToolSet {
    let mut properties = Map::new();
    for i in 0..n {
        properties.insert(format!("key_{i:06}"), json!({"type": kind}));
    }
    let required: Vec<String> = (0..required).map(|i| format!("key_{i:06}")).collect();
    ToolSet::from_json(&json!([{"name": "wide", "parameters": {
        "type": "object", "properties": properties, "required": required,
        "additionalProperties": false}}]))
}

fn object_text(n: usize, key: impl Fn(usize) -> String, value: &str) -> String {
    let members: Vec<String> = (0..n).map(|i| format!("\"{}\":{value}", key(i))).collect();
    format!("{{{}}}", members.join(","))
}

#[allow(clippy::too_many_lines)] // one table of cases
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (shape, _) in RUNS {
        cases.push(Case {
            stage: "recover",
            shape,
            n: 20_000,
            make: match shape {
                "spaces" => |n| whole_scan(run_text("spaces", " ", n)),
                "newlines" => |n| whole_scan(run_text("newlines", "\n", n)),
                "backticks" => |n| whole_scan(run_text("backticks", "`", n)),
                "tildes" => |n| whole_scan(run_text("tildes", "~", n)),
                "fence then one long line" => {
                    |n| whole_scan(run_text("fence then one long line", " ", n))
                }
                _ => |n| whole_scan(run_text("span then spaces (`x + blanks)", " ", n)),
            },
        });
    }
    for (shape, _) in RUNS {
        cases.push(Case {
            stage: "stream",
            shape,
            n: 20_000,
            make: match shape {
                "spaces" => |n| stream_scan(run_text("spaces", " ", n)),
                "newlines" => |n| stream_scan(run_text("newlines", "\n", n)),
                "backticks" => |n| stream_scan(run_text("backticks", "`", n)),
                "tildes" => |n| stream_scan(run_text("tildes", "~", n)),
                "fence then one long line" => {
                    |n| stream_scan(run_text("fence then one long line", " ", n))
                }
                _ => |n| stream_scan(run_text("span then spaces (`x + blanks)", " ", n)),
            },
        });
    }
    cases.push(Case {
        stage: "stream",
        shape: "held payload `{` + spaces",
        n: 20_000,
        make: |n| stream_scan(format!("{{{}", " ".repeat(n))),
    });
    cases.push(Case {
        stage: "stream",
        shape: "leaked call + spaces",
        n: 20_000,
        make: |n| {
            stream_scan(format!(
                "<tool_call>{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{}\"}}}}</tool_call>",
                " ".repeat(n)
            ))
        },
    });

    let salvage_case = |shape, make: fn(usize) -> Box<dyn Fn()>| Case {
        stage: "salvage",
        shape,
        n: 2_000,
        make,
    };
    cases.push(salvage_case("unquoted keys, no close", |n| {
        let text: String = (0..n)
            .map(|i| format!("k{i:06}: {}, ", i + 100_000))
            .collect();
        let text = format!("{{{text}");
        Box::new(move || {
            let _ = black_box(salvage(
                black_box(&text),
                &SalvageOptions::default().with_max_bytes(usize::MAX),
            ));
        })
    }));
    cases.push(salvage_case("open string of escapes", |n| {
        let text = format!("{{\"a\": \"{}", "\\n\\\"".repeat(n));
        Box::new(move || {
            let _ = black_box(salvage(
                black_box(&text),
                &SalvageOptions::default().with_max_bytes(usize::MAX),
            ));
        })
    }));
    cases.push(salvage_case("single quotes, trailing commas", |n| {
        let text: String = (0..n).map(|i| format!("'k{i:06}': ['v', 1,],")).collect();
        let text = format!("{{{text}}}");
        Box::new(move || {
            let _ = black_box(salvage(
                black_box(&text),
                &SalvageOptions::default().with_max_bytes(usize::MAX),
            ));
        })
    }));
    // Every quote is followed by `, [` and an array the look-ahead reads up to its limit before
    // it finds no end (issue #11 §1: an array where a key belongs).
    cases.push(salvage_case("quotes before `, [` arrays", |n| {
        let text = format!("{{\"k\": \"{}\"}}", "x\", [\"x\", [".repeat(n));
        Box::new(move || {
            let _ = black_box(salvage(
                black_box(&text),
                &SalvageOptions::default().with_max_bytes(usize::MAX),
            ));
        })
    }));
    cases.push(salvage_case("nested arrays ×100, wide", |n| {
        let text = format!("{}{}", "[".repeat(100), "1,".repeat(n));
        Box::new(move || {
            let _ = black_box(salvage(
                black_box(&text),
                &SalvageOptions::default().with_max_bytes(usize::MAX),
            ));
        })
    }));

    let repair_case = |shape, make: fn(usize) -> Box<dyn Fn()>| Case {
        stage: "repair",
        shape,
        n: 100,
        make,
    };
    cases.push(repair_case("field_renamed: n renamed keys", |n| {
        let mender = Mender::new(wide_tool(n, "integer", n));
        let args = object_text(n, |i| format!("key-{i:06}"), "1");
        Box::new(move || {
            black_box(mender.repair_call("wide", black_box(&args)));
        })
    }));
    cases.push(repair_case("null_stripped: n null keys", |n| {
        let mender = Mender::new(wide_tool(n, "integer", 0));
        let args = object_text(n, |i| format!("key_{i:06}"), "null");
        Box::new(move || {
            black_box(mender.repair_call("wide", black_box(&args)));
        })
    }));
    cases.push(repair_case("string_to_number: n keys", |n| {
        let mender = Mender::new(wide_tool(n, "integer", n));
        let args = object_text(n, |i| format!("key_{i:06}"), "\"7\"");
        Box::new(move || {
            black_box(mender.repair_call("wide", black_box(&args)));
        })
    }));
    cases.push(Case {
        stage: "retry",
        shape: "wide schema, n unknown keys",
        n: 1_000,
        make: |n| {
            let mender = Mender::new(wide_tool(n, "integer", 1));
            let args = object_text(n, |i| format!("other_{i:06}"), "1");
            Box::new(move || {
                black_box(mender.repair_call("wide", black_box(&args)));
            })
        },
    });
    cases.push(Case {
        stage: "retry",
        shape: "wide schema, n wrong types",
        n: 1_000,
        make: |n| {
            let mender = Mender::new(wide_tool(n, "integer", 0));
            let args = object_text(n, |i| format!("key_{i:06}"), "[]");
            Box::new(move || {
                black_box(mender.repair_call("wide", black_box(&args)));
            })
        },
    });

    let prepare_case = |shape, make: fn(usize) -> Box<dyn Fn()>| Case {
        stage: "prepare",
        shape,
        n: 1_000,
        make,
    };
    cases.push(prepare_case("n properties", |n| {
        let mut properties = Map::new();
        for i in 0..n {
            properties.insert(
                format!("key_{i:06}"),
                json!({"type": "string", "description": "x"}),
            );
        }
        let tools =
            json!([{"name": "wide", "parameters": {"type": "object", "properties": properties}}]);
        Box::new(move || {
            let _ = black_box(prepare_tools(
                black_box(&tools),
                "qwen3",
                &PrepareOptions::default(),
            ));
        })
    }));
    cases.push(prepare_case("n tools", |n| {
        let tools: Vec<Value> = (0..n)
            .map(|i| {
                json!({"name": format!("t{i:06}"), "parameters": {"type": "object",
                "properties": {"a": {"type": "object", "properties": {"b": {"type": "integer"}}}}}})
            })
            .collect();
        let tools = Value::Array(tools);
        Box::new(move || {
            let _ = black_box(prepare_tools(
                black_box(&tools),
                "qwen3",
                &PrepareOptions::default(),
            ));
        })
    }));
    // Linear references at the same sizes: a plain `Value` clone of the n-property schema and a
    // parse of the n-key call do O(n) work, so their ratio is what the memory hierarchy and
    // allocator give for ×10 data on this machine (the stages above are read against them).
    cases.push(Case {
        stage: "reference",
        shape: "clone n-property schema",
        n: 1_000,
        make: |n| {
            let mut properties = Map::new();
            for i in 0..n {
                properties.insert(format!("key_{i:06}"), json!({"type": "integer"}));
            }
            let schema = json!({"type": "object", "properties": properties});
            Box::new(move || {
                black_box(black_box(&schema).clone());
            })
        },
    });
    cases.push(Case {
        stage: "reference",
        shape: "parse n-key call",
        n: 1_000,
        make: |n| {
            let args = object_text(n, |i| format!("other_{i:06}"), "1");
            Box::new(move || {
                black_box(serde_json::from_str::<Value>(black_box(&args)).ok());
            })
        },
    });
    // The salvage row "single quotes, trailing commas" builds a 20 000-member map of small
    // arrays at 10n: serde_json building the same value from strict JSON is its floor.
    cases.push(Case {
        stage: "reference",
        shape: "parse n members of small arrays",
        n: 2_000,
        make: |n| {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i:06}\": [\"v\", 1]")).collect();
            let text = format!("{{{}}}", members.join(","));
            Box::new(move || {
                black_box(serde_json::from_str::<Value>(black_box(&text)).ok());
            })
        },
    });
    cases.push(prepare_case("compile: n properties", |n| {
        let mut properties = Map::new();
        for i in 0..n {
            properties.insert(format!("key_{i:06}"), json!({"type": "string"}));
        }
        let tools =
            json!([{"name": "wide", "parameters": {"type": "object", "properties": properties}}]);
        Box::new(move || {
            black_box(ToolSet::from_json(black_box(&tools)));
        })
    }));
    cases
}
