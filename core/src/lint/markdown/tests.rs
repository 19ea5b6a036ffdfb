//! Unit tests of the Markdown scanner.

use super::*;

fn kinds(text: &str) -> Vec<(HiddenKind, &str, usize, usize)> {
    hidden_parts(text)
        .into_iter()
        .map(|p| (p.kind, &text[p.text.clone()], p.first_line, p.last_line))
        .collect()
}

#[test]
fn each_construct_is_found_with_its_lines() {
    let md = "# T\n\nSee <!-- one\ntwo --> here.\n\n[a](https://x.test \"tip\") and ![i](p.png 'alt t')\n\n[//]: # (a note)\n\n<span style=\"display: none\">gone</span> <div hidden>\nx\n</div>\n";
    assert_eq!(
        kinds(md),
        vec![
            (HiddenKind::Comment, " one\ntwo ", 3, 4),
            (HiddenKind::LinkTitle, "tip", 6, 6),
            (HiddenKind::LinkTitle, "alt t", 6, 6),
            (HiddenKind::ReferenceDefinition, "[//]: # (a note)", 8, 8),
            (HiddenKind::HiddenHtml, "gone", 10, 10),
            (HiddenKind::HiddenHtml, "\nx\n", 10, 12),
        ]
    );
}

#[test]
fn code_is_not_hidden() {
    let md = "```html\n<!-- in a fence -->\n<span hidden>x</span>\n```\nand `<!-- span -->` and ``a ` <!-- b -->``\n~~~\n[x]: y\n~~~\n";
    assert!(kinds(md).is_empty(), "{:?}", kinds(md));
    let s = scan(md);
    assert_eq!(s.fences.len(), 2);
    assert_eq!(s.code_spans.len(), 2);
}

#[test]
fn look_alikes_are_not_hidden() {
    let md = "[file]: [contract summary] → REQ-1\n[a](b) (c)\n<span style=\"font-size:10px\">x</span> <p aria-hidden=\"true\">y</p>\n[text](https://x.test)\n";
    assert!(kinds(md).is_empty(), "{:?}", kinds(md));
}

#[test]
fn an_unclosed_comment_hides_the_rest() {
    let md = "a\n<!-- open\nrest\n";
    assert_eq!(
        kinds(md),
        vec![(HiddenKind::Comment, " open\nrest\n", 2, 3)]
    );
}
