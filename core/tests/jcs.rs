//! The canonical JSON form against RFC 8785's own examples: the §3.2.2
//! example object (its canonical text and, §3.2.4, its UTF-8 bytes), the
//! §3.2.3 property-sorting example, and every number of Appendix B — plus
//! integers beyond 2^53, which must be written as the double they round to.

use serde_json::Value;
use toolreg_core::jcs;

fn canonical(json: &str) -> String {
    let value: Value = serde_json::from_str(json).expect("test input is JSON");
    jcs::to_string(&value)
}

/// RFC 8785 §3.2.2: the example with numbers, escapes and literals.
const EXAMPLE_INPUT: &str = r#"{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"#;

#[test]
fn rfc8785_section_3_2_2_example_is_canonicalized_exactly() {
    assert_eq!(
        canonical(EXAMPLE_INPUT),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn rfc8785_section_3_2_4_utf8_bytes_of_the_example() {
    let expected = "7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
        75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
        5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
        65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
        5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
        30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d";
    let expected: Vec<u8> = expected
        .split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect();
    let value: Value = serde_json::from_str(EXAMPLE_INPUT).unwrap();
    assert_eq!(jcs::to_vec(&value), expected);
}

#[test]
fn rfc8785_section_3_2_3_sorts_properties_by_utf16_code_units() {
    let input = r#"{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }"#;
    let out = canonical(input);
    let reparsed: serde_json::Map<String, Value> = serde_json::from_str(&out).unwrap();
    let order: Vec<&str> = reparsed.values().filter_map(Value::as_str).collect();
    assert_eq!(
        order,
        [
            "Carriage Return",
            "One",
            "Control",
            "Latin Small Letter O With Diaeresis",
            "Euro Sign",
            "Emoji: Grinning Face",
            "Hebrew Letter Dalet With Dagesh",
        ],
        "{out}"
    );
    assert!(
        out.starts_with(r#"{"\r":"Carriage Return","1":"One","#),
        "{out}"
    );
}

/// RFC 8785 Appendix B: IEEE 754 bit patterns and their JSON form.
const APPENDIX_B: &[(u64, Option<&str>)] = &[
    (0x0000000000000000, Some("0")),
    (0x8000000000000000, Some("0")),
    (0x0000000000000001, Some("5e-324")),
    (0x8000000000000001, Some("-5e-324")),
    (0x7fefffffffffffff, Some("1.7976931348623157e+308")),
    (0xffefffffffffffff, Some("-1.7976931348623157e+308")),
    (0x4340000000000000, Some("9007199254740992")),
    (0xc340000000000000, Some("-9007199254740992")),
    (0x4430000000000000, Some("295147905179352830000")),
    (0x7fffffffffffffff, None),
    (0x7ff0000000000000, None),
    (0x44b52d02c7e14af5, Some("9.999999999999997e+22")),
    (0x44b52d02c7e14af6, Some("1e+23")),
    (0x44b52d02c7e14af7, Some("1.0000000000000001e+23")),
    (0x444b1ae4d6e2ef4e, Some("999999999999999700000")),
    (0x444b1ae4d6e2ef4f, Some("999999999999999900000")),
    (0x444b1ae4d6e2ef50, Some("1e+21")),
    (0x3eb0c6f7a0b5ed8c, Some("9.999999999999997e-7")),
    (0x3eb0c6f7a0b5ed8d, Some("0.000001")),
    (0x41b3de4355555553, Some("333333333.3333332")),
    (0x41b3de4355555554, Some("333333333.33333325")),
    (0x41b3de4355555555, Some("333333333.3333333")),
    (0x41b3de4355555556, Some("333333333.3333334")),
    (0x41b3de4355555557, Some("333333333.33333343")),
    (0xbecbf647612f3696, Some("-0.0000033333333333333333")),
    (0x43143ff3c1cb0959, Some("1424953923781206.2")),
];

#[test]
fn rfc8785_appendix_b_number_samples() {
    for &(bits, expected) in APPENDIX_B {
        let f = f64::from_bits(bits);
        assert_eq!(
            jcs::number_to_string(f).as_deref(),
            expected,
            "{bits:016x} ({f:e})"
        );
        // The same number read from JSON text comes out the same way.
        if let Some(text) = expected {
            if bits != 0x8000000000000000 {
                assert_eq!(canonical(text), text, "{bits:016x} read back from JSON");
            }
        }
    }
}

#[test]
fn numbers_are_doubles_whatever_their_json_spelling() {
    // Integers beyond 2^53 are written as the double they round to.
    assert_eq!(canonical("9007199254740993"), "9007199254740992");
    assert_eq!(canonical("18446744073709551615"), "18446744073709552000");
    assert_eq!(canonical("-9223372036854775808"), "-9223372036854776000");
    assert_eq!(canonical("-0"), "0");
    assert_eq!(canonical("-0.0"), "0");
    assert_eq!(canonical("1.0"), "1");
    assert_eq!(canonical("100"), "100");
    assert_eq!(canonical("1e2"), "100");
    assert_eq!(canonical("0.1e1"), "1");
    assert_eq!(canonical("[1E-7, 123e-20, 1e21]"), "[1e-7,1.23e-18,1e+21]");
}

#[test]
fn strings_escape_only_what_the_rfc_escapes() {
    assert_eq!(
        canonical(r#""\u0000\u001f\u007f\b\t\n\f\r/ \u2028 é""#),
        "\"\\u0000\\u001f\u{7f}\\b\\t\\n\\f\\r/ \u{2028} é\""
    );
    assert_eq!(canonical(r#"{"b":[],"a":{}}"#), r#"{"a":{},"b":[]}"#);
    assert_eq!(
        canonical("{ \"a\" : [ 1 , { \"y\" : null , \"x\" : true } ] }"),
        r#"{"a":[1,{"x":true,"y":null}]}"#
    );
}
