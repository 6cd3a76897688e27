//! Any text: salvage returns values or a typed error, never panics, and what it returns
//! serialises back to JSON that parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolmend::salvage::{SalvageOptions, salvage};

fuzz_target!(|text: &str| {
    if let Ok(salvaged) = salvage(text, &SalvageOptions::default()) {
        assert!(!salvaged.values.is_empty());
        for value in &salvaged.values {
            let again: serde_json::Value = serde_json::from_str(&value.to_string()).unwrap();
            assert_eq!(&again, value);
        }
    }
});
