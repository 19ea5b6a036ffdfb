//! Tool search over tantivy (owned by the search work; see issue 4).
