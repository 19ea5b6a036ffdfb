//! toolreg-server: the registry's HTTP API, web index, diesel store,
//! object_store blobs and tantivy search.

pub mod search;
