//! The URL-state parser on arbitrary fragments: never a panic, notices are bounded plain
//! text, every value it accepts is in range, and what it accepts survives a round trip —
//! applied to the page's state, written back as a fragment and parsed again, it gives the
//! same state with no notice.
#![no_main]

use attnlab_app::i18n::Lang;
use attnlab_app::state::{State, TAU_MAX, TAU_MIN};
use attnlab_app::url_state::{fragment, parse, UrlState, MAX_TEXT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data);
    let (url, notices) = parse(&raw);
    for n in &notices {
        // a notice quotes at most 40 characters of key and value, plus a short reason
        assert!(n.chars().count() <= 120, "notice too long: {n:?}");
    }
    if let Some(t) = &url.text {
        assert!(t.chars().count() <= MAX_TEXT);
    }
    if let Some(tau) = url.tau {
        assert!(tau.is_finite() && (TAU_MIN..=TAU_MAX).contains(&tau));
    }

    let mut st = State::new(Lang::Ko);
    url.apply_to(&mut st);
    let again = fragment(&st);
    let (back, notices2) = parse(&again);
    assert!(notices2.is_empty(), "{again:?} → {notices2:?}");
    let mut st2 = State::new(Lang::Ko);
    back.apply_to(&mut st2);
    assert_eq!(st2, st, "round trip of {raw:?} via {again:?}");
    // parsing what we wrote is a fixed point
    assert_eq!(parse(&fragment(&st2)).0, back);
    let _: UrlState = back;
});
