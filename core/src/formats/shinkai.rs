//! shinkai format
