//! matimo format
