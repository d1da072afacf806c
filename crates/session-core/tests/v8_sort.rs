//! `js_sort` against Node's `Array.prototype.sort` on arrays of 64 items and more, where V8
//! merges runs, and on shorter ones (sorted in place by insertion): `corpora/jssort/cases.json`, written by Node 20 (`corpora/jssort/gen.mjs`),
//! holds numbers with `NaN` (as `null`), which make `a - b` inconsistent, and the order Node
//! left their indices in.

use session_core::jssort::js_sort;

#[test]
fn orders_like_node_with_nan_and_long_arrays() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpora/jssort/cases.json");
    let cases: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 150);
    let (mut with_nan, mut short) = (0, 0);
    for (c, case) in cases.iter().enumerate() {
        let values: Vec<f64> =
            case["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect();
        let expected: Vec<usize> =
            case["order"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
        with_nan += usize::from(values.iter().any(|v| v.is_nan()));
        short += usize::from(values.len() < 64);
        let mut tagged: Vec<(f64, usize)> = values.iter().copied().zip(0..).collect();
        js_sort(&mut tagged, |a, b| a.0 - b.0);
        let got: Vec<usize> = tagged.iter().map(|t| t.1).collect();
        assert_eq!(got, expected, "case {c} ({} items)", values.len());
    }
    // The cases must exercise the inconsistent comparator, not only the stable sort.
    assert!(with_nan >= 40, "{with_nan} cases hold NaN");
    assert!(short >= 30, "{short} cases are shorter than 64");
}
