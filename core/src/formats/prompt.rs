//! prompt format
