//! The metrics recorder does not grow without a scraper.
//!
//! `metrics-exporter-prometheus` keeps every histogram sample until something drains it: a
//! `/metrics` scrape or its upkeep. The proxy records one per request and (until issue #29 §3)
//! one per streamed chunk, so before it ran the upkeep itself an unscraped proxy grew by about
//! 1 KB per 50-event stream for as long as it ran (103 MB after ~70,000 streams under `wrk`).
//! Its own process, so that no other test's allocations move the resident set.

use std::time::Duration;

use toolmend_proxy::ProxyConfig;

/// This process's resident set, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn histogram_samples_are_drained_without_a_scrape() {
    // Building the router installs the recorder (and its upkeep) for the process.
    let _router = toolmend_proxy::app(ProxyConfig::new("http://127.0.0.1:9")).unwrap();
    let histogram = metrics::histogram!("toolmend_overhead_seconds", "route" => "stream");
    let mut rss = Vec::new();
    for _ in 0..4 {
        for i in 0..400_000_u32 {
            histogram.record(f64::from(i % 1000) * 1e-6);
        }
        // Past an upkeep: what is still held now is held for good.
        std::thread::sleep(Duration::from_millis(1500));
        rss.push(rss_kib());
    }
    // The first round sizes the allocator's pools; three more must reuse them. Samples kept
    // would be 8 bytes each: 9.6 MB for the three rounds.
    let growth = rss[3].saturating_sub(rss[0]);
    assert!(
        growth < 2048,
        "RSS after each 400,000 samples (KiB): {rss:?}"
    );
}
