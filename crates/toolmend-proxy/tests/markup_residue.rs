//! Blanks left between removed markup are dropped (issue #24, item 3): after two `<tool_call>`
//! blocks separated by a line break are taken out, the client gets no `"\n"` text (no content,
//! no text block, no message item), in every API, streamed and not. Text the model wrote stays.

mod leaks;
mod support;

use leaks::{ALL, TWO_BLOCKS, recovered_ids, visible_text};
use support::{post_text, start};

#[tokio::test]
async fn only_markup_and_blanks_leave_no_text_part() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        for stream in [false, true] {
            for text in [TWO_BLOCKS.to_owned(), format!("\n{TWO_BLOCKS}\n\n")] {
                let model = format!("{api:?}-{stream}-{}", text.len());
                mock.script(&model, api.script(stream, &text));
                let out = post_text(&base, api.path(), &api.request(&model, stream, 0)).await;
                assert_eq!(recovered_ids(&out).len(), 2, "{model}: {out}");
                let (visible, parts) = visible_text(api, stream, &out);
                assert_eq!((visible.as_str(), parts), ("", 0), "{model}: {out}");
            }
        }
    }
}

#[tokio::test]
async fn text_the_model_wrote_stays() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        for stream in [false, true] {
            let model = format!("{api:?}-{stream}");
            mock.script(
                &model,
                api.script(stream, &format!("Reading.\n{TWO_BLOCKS}")),
            );
            let out = post_text(&base, api.path(), &api.request(&model, stream, 0)).await;
            assert_eq!(recovered_ids(&out).len(), 2, "{model}: {out}");
            let (visible, parts) = visible_text(api, stream, &out);
            assert!(visible.starts_with("Reading."), "{model}: {out}");
            assert!(parts >= 1, "{model}: {out}");
        }
    }
}

#[tokio::test]
async fn blank_text_without_markup_passes_as_sent() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        for stream in [false, true] {
            let model = format!("{api:?}-{stream}");
            mock.script(&model, api.script(stream, "\n"));
            let out = post_text(&base, api.path(), &api.request(&model, stream, 0)).await;
            let (visible, _) = visible_text(api, stream, &out);
            assert_eq!(visible, "\n", "{model}: {out}");
        }
    }
}
