//! Calls recovered from text get ids no other turn of the conversation has (issue #24, item 1):
//! the same leak answered to two turns of one conversation gives two sets of ids, in every API,
//! streamed and not, with no state in the proxy.

mod leaks;
mod support;

use leaks::{ALL, TWO_BLOCKS, recovered_ids};
use support::{post_text, start};

#[tokio::test]
async fn recovered_ids_differ_from_turn_to_turn_in_every_api() {
    let (mock, base) = start(|_| {}).await;
    for api in ALL {
        for stream in [false, true] {
            let model = format!("{api:?}-{stream}");
            mock.script(&model, api.script(stream, TWO_BLOCKS));
            let mut seen: Vec<String> = Vec::new();
            for turn in 0..3 {
                let text = post_text(&base, api.path(), &api.request(&model, stream, turn)).await;
                let ids = recovered_ids(&text);
                assert_eq!(ids.len(), 2, "{model} turn {turn}: {text}");
                for id in &ids {
                    let (tag, n) = id["call_tm_".len()..].split_once('_').unwrap();
                    assert_eq!(tag.len(), 12, "{model}: {id}");
                    assert!(n.parse::<u32>().is_ok(), "{model}: {id}");
                    assert!(
                        !seen.contains(id),
                        "{model} turn {turn} reused {id}: {text}"
                    );
                }
                seen.extend(ids);
            }
            // The same request answered the same way gets the same ids: nothing random, no
            // state (a retried request is the same turn).
            let again = post_text(&base, api.path(), &api.request(&model, stream, 2)).await;
            assert_eq!(recovered_ids(&again), seen[4..], "{model}");
        }
    }
}
