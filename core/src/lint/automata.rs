//! The lint's compiled patterns: built on first use, released when the
//! lint goes unused.
//!
//! The lint's regular expressions are the largest thing a registry holds
//! only for publishing: the compiled automata, and beside each one a lazy
//! DFA cache for every thread that ran it, which grows with the text it has
//! seen. A registry lints only while tools are published or rescanned, so
//! holding them between bursts is memory spent on nothing.
//!
//! Each pattern is a [`Compiled`] static. [`Compiled::get`] hands out the
//! automaton (building it on first use, or first use after a release) and
//! marks it used. [`release_unused`], called periodically by whoever runs
//! the lint for a long time (the server), drops every automaton that was
//! not used since the call before: one unused for a whole period is
//! released after one to two periods. A lint running at that moment keeps
//! the automaton it holds until it is done; the next use builds it again.
//!
//! Building every pattern again costs a few milliseconds on the first
//! publish after a quiet period; a busy registry keeps them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// One compiled pattern (or set of patterns), held while it is used.
pub(crate) struct Compiled<T: 'static> {
    build: fn() -> T,
    slot: RwLock<Option<Arc<T>>>,
    /// Set by [`Compiled::get`], cleared by each [`release_unused`].
    used: AtomicBool,
    /// Whether this static is in [`BUILT`] yet.
    listed: AtomicBool,
}

/// What [`release_unused`] can release.
trait Releasable: Sync {
    /// Drop the automaton unless it was used since the last call; returns
    /// whether one was dropped.
    fn release_if_unused(&self) -> bool;
}

/// Every [`Compiled`] that was ever built (each listed once).
static BUILT: Mutex<Vec<&'static dyn Releasable>> = Mutex::new(Vec::new());

impl<T: Send + Sync + 'static> Compiled<T> {
    pub(crate) const fn new(build: fn() -> T) -> Self {
        Self {
            build,
            slot: RwLock::new(None),
            used: AtomicBool::new(false),
            listed: AtomicBool::new(false),
        }
    }

    /// The automaton, built now if it isn't held.
    pub(crate) fn get(&'static self) -> Arc<T> {
        // Read first: once set, the flag's cache line is shared, not
        // written by every thread on every use.
        if !self.used.load(Ordering::Relaxed) {
            self.used.store(true, Ordering::Relaxed);
        }
        if let Some(held) = self.read() {
            return held;
        }
        let mut slot = self.slot.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = slot.as_ref() {
            return Arc::clone(held);
        }
        let built = Arc::new((self.build)());
        *slot = Some(Arc::clone(&built));
        drop(slot);
        if !self.listed.swap(true, Ordering::AcqRel) {
            BUILT
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(self);
        }
        built
    }

    fn read(&self) -> Option<Arc<T>> {
        self.slot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    #[cfg(test)]
    fn is_held(&self) -> bool {
        self.read().is_some()
    }
}

impl<T: Send + Sync + 'static> Releasable for Compiled<T> {
    fn release_if_unused(&self) -> bool {
        if self.used.swap(false, Ordering::Relaxed) {
            return false;
        }
        let held = self
            .slot
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        held.is_some()
    }
}

/// Release every lint automaton not used since the previous call; returns
/// how many were released. Call it periodically (the server does, every
/// few seconds); with no calls, built automata stay for the process's life.
pub fn release_unused() -> usize {
    let built = BUILT.lock().unwrap_or_else(PoisonError::into_inner).clone();
    built.iter().filter(|c| c.release_if_unused()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static WORDS: Compiled<regex::Regex> = Compiled::new(|| {
        BUILDS.fetch_add(1, Ordering::SeqCst);
        regex::Regex::new(r"\bautomaton\b").expect("valid")
    });

    #[test]
    fn an_automaton_is_released_after_a_period_unused_and_built_again_on_use() {
        assert!(WORDS.get().is_match("one automaton"));
        assert_eq!(BUILDS.load(Ordering::SeqCst), 1);
        // Used since the last sweep: kept.
        release_unused();
        assert!(WORDS.is_held());
        // Unused for a whole period: released.
        release_unused();
        assert!(!WORDS.is_held());
        // A holder keeps its automaton through a release.
        let held = WORDS.get();
        assert_eq!(BUILDS.load(Ordering::SeqCst), 2);
        release_unused();
        release_unused();
        assert!(!WORDS.is_held());
        assert!(held.is_match("an automaton held"));
        assert!(WORDS.get().is_match("built once more: automaton"));
        assert_eq!(BUILDS.load(Ordering::SeqCst), 3);
    }
}
