//! Natural-language queries: a need in a sentence, however long, is read
//! for its telling words and ranked by them; the engine's limits apply
//! inside instead of refusing the query.

use super::*;
use crate::*;

/// Tools where a name shares one word with a need that another tool's
/// description answers.
fn needs() -> Vec<SearchDoc> {
    vec![
        doc("steps", "Count the lines of a log file."),
        doc("robot-move", "Move the robot forward by a number of steps."),
        doc("word", "Count the words and characters of a text."),
        doc(
            "dictionary-lookup",
            "Look up the definition of an English word in a dictionary.",
        ),
        doc(
            "weather-forecast",
            "Five-day weather forecast for a city, in Celsius or Fahrenheit.",
        ),
        doc("unit-converter", "Convert a temperature between units."),
        doc(
            "mortgage-calculator",
            "Monthly mortgage payment for a loan.",
        ),
        doc("data-export", "Export data as CSV."),
        doc("data-import", "Import data from CSV."),
        doc("data-clean", "Clean data: trim and dedupe rows."),
    ]
}

#[test]
fn a_shared_name_word_does_not_beat_a_description_that_matches_the_need() {
    let index = index_of(&needs());
    assert_eq!(
        names(&search(&index, "make the robot take 10 steps forward"))[0],
        "robot-move"
    );
    assert_eq!(
        names(&search(
            &index,
            "what is the definition of the word serendipity"
        ))[0],
        "dictionary-lookup"
    );
}

#[test]
fn rare_words_weigh_more_than_common_ones() {
    let index = index_of(&needs());
    let r = search(&index, "work out the data for my monthly mortgage");
    assert_eq!(names(&r)[0], "mortgage-calculator");
}

#[test]
fn stopwords_and_numbers_are_left_out_of_long_queries_only() {
    let index = index_of(&needs());
    let r = search(
        &index,
        "Could you please find the weather forecast for a city for the next 5 days and convert it to Fahrenheit?",
    );
    assert_eq!(
        r.words,
        [
            "find",
            "weather",
            "forecast",
            "city",
            "next",
            "days",
            "convert",
            "fahrenheit"
        ]
    );
    assert_eq!(names(&r)[0], "weather-forecast");
    assert!(
        r.hits[0]
            .highlights
            .description
            .contains("<mark>weather</mark>"),
        "{:?}",
        r.hits[0].highlights
    );
    // Short queries keep every word, stopwords and numbers too.
    assert_eq!(search(&index, "the data 2").words, ["the", "data", "2"]);
    // A long query of nothing but stopwords still searches its words.
    assert_eq!(
        search(&index, "what is it that you are about to do")
            .words
            .len(),
        9
    );
}

/// A need as an agent writes it: a long preamble, then the request. Over a
/// thousand characters, with more distinct words than are searched.
fn long_need() -> String {
    let mut q = String::from(
        "You are a helpful assistant working for a travel company. Our customers write to us \
         about their plans, and you answer them politely, in full sentences, without jargon. ",
    );
    for i in 0..40 {
        q.push_str(&format!(
            "Remember rule number {i}: be kind, brief and exact. "
        ));
    }
    q.push_str(
        "Now the customer's request: I need the weather forecast for Lisbon for the next \
         five days, and please convert the temperatures to Fahrenheit.",
    );
    q
}

#[test]
fn a_need_of_over_a_thousand_characters_is_accepted_and_read_whole() {
    let mut docs = needs();
    // Known words, each in one tool: more distinct words than are searched.
    for w in [
        "travel",
        "company",
        "customers",
        "plans",
        "answer",
        "politely",
        "sentences",
        "jargon",
        "remember",
        "rule",
        "kind",
        "brief",
        "exact",
        "assistant",
        "helpful",
        "working",
        "write",
        "request",
        "customer",
        "full",
        "number",
        "lisbon",
    ] {
        docs.push(doc(&format!("tool-{w}"), &format!("Has the word {w}.")));
    }
    let index = index_of(&docs);
    let q = long_need();
    assert!(q.chars().count() > 1_000, "{}", q.chars().count());
    let r = index.query(&SearchParams::q(q.clone())).unwrap();
    assert_eq!(names(&r)[0], "weather-forecast", "{:?}", r.words);
    assert!(r.words.len() <= MAX_TERMS);
    assert!(r.words.contains(&"fahrenheit".to_string()));
    // Through the API's parameters too: no limit on its length.
    let p = SearchRequest {
        q: Some(q),
        ..SearchRequest::default()
    }
    .parse()
    .unwrap();
    assert_eq!(names(&index.query(&p).unwrap())[0], "weather-forecast");
}

#[test]
fn the_rarest_words_are_searched_when_there_are_too_many() {
    // Word `wN` occurs in N + 1 tools: the higher N, the more common.
    let mut docs = vec![];
    for n in 0..40 {
        for copy in 0..=n {
            docs.push(doc(&format!("t{n}-{copy}"), &format!("w{n} text")));
        }
    }
    let index = index_of(&docs);
    let q: Vec<String> = (0..40).rev().map(|n| format!("w{n}")).collect();
    let r = search(&index, &q.join(" "));
    let expected: Vec<String> = (0..MAX_TERMS).rev().map(|n| format!("w{n}")).collect();
    assert_eq!(r.words, expected);
    // Known words come before unknown ones (which match nothing).
    let mut with_unknown = q.clone();
    with_unknown.insert(0, "zzunknown".into());
    assert_eq!(search(&index, &with_unknown.join(" ")).words, expected);
    let r = search(&index, "zzunknown w39 w38 w37 w36 w35");
    assert_eq!(r.words, ["zzunknown", "w39", "w38", "w37", "w36", "w35"]);
}

#[test]
fn characters_past_the_reading_limit_are_ignored() {
    let index = index_of(&needs());
    let padding = "ab ".repeat(MAX_ANALYZED_CHARS / 3);
    let r = search(&index, &format!("{padding} mortgage"));
    assert!(!r.words.contains(&"mortgage".to_string()), "{:?}", r.words);
    let r = search(
        &index,
        &format!("{} mortgage", &padding[..padding.len() - 30]),
    );
    assert_eq!(names(&r)[0], "mortgage-calculator");
}
