//! The threads the library keeps between calls: a bulk operation's parts
//! 1.. run on them instead of on threads started for the call.
//!
//! Starting a thread and joining it took about 50 us here (the new thread
//! ran about 27 us after `pthread_create`), and an unsorted check on two
//! threads runs three parallel steps, so a 1M-entry check (about 1.5 ms)
//! spent a tenth of its time starting threads. A kept thread that is
//! still waiting for work (it spins for [`SPIN`] after each part) starts
//! a part without being woken (waking a sleeping one took 16-22 us here).
//!
//! - **Slots.** [`MAX_THREADS`]` - 1` slots, each a mutex, a condition
//!   variable and what passes between a caller and the slot's thread. No
//!   allocation: a call that cannot start a thread, or finds every slot
//!   taken, runs the part itself, as before.
//! - **Lifetime.** A slot's thread starts when a call first needs it and
//!   then stays, asleep on the slot's condition variable between calls,
//!   for the life of the process (as OpenMP's threads do). A process has at
//!   most `MAX_THREADS - 1` of them, whatever the number of callers. They
//!   do not end when idle: a timed wait, and threads ending while others
//!   start, both made helgrind report races inside glibc's condition
//!   variable and Rust's thread start-up, which would have hidden real ones
//!   in the library's own hand-overs.
//! - **Fork.** A slot records the process that started its thread; a child
//!   process (whose slots name its parent) starts its own, with the slot's
//!   condition variable made anew (the copy may count the parent's waiters,
//!   and glibc's broadcast would wait for them). Slots are taken with
//!   `pthread_mutex_trylock`, so a lock that a parent's thread held at the
//!   fork is passed over rather than waited on.
//! - **Why pthread mutexes.** Every hand-over (the part, then its end) is a
//!   lock and unlock of the slot's `pthread_mutex_t`, which race detectors
//!   (helgrind, ThreadSanitizer) see as ordering the caller's writes before
//!   the thread's reads and back; the spin is `trylock` too, never a plain
//!   read of shared state.
//! - **Unloading.** A kept thread is asleep in this library's code, so
//!   the library must stay mapped: checked, a `dlclose` leaves its mappings
//!   while kept threads live, and the process runs on and exits cleanly
//!   (glibc does not unload a library with thread-local destructors
//!   pending, which Rust's thread start registers).

use super::MAX_THREADS;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// How long a thread waits for its next part spinning before it sleeps;
/// and about how long a caller spins for a part's end before it sleeps.
pub const SPIN: Duration = Duration::from_micros(100);

type Payload = Box<dyn std::any::Any + Send + 'static>;

/// What a part is: the call's work and the part's number. The pointer is
/// the call's `&dyn Fn`, its lifetime erased; see [`run_parts`].
#[derive(Clone, Copy)]
struct Part {
    work: *const (dyn Fn(usize) + Sync + 'static),
    k: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// No thread serves the slot.
    Empty,
    /// Its thread waits for work; no call has it.
    Idle,
    /// A call has it (and has started its thread, if it had none).
    Claimed,
    /// A part waits in `part` for the thread.
    Posted,
    /// The thread runs the part.
    Running,
    /// The part has ended (`panic` holds what it panicked with).
    Done,
}

struct State {
    phase: Phase,
    /// The process whose thread serves the slot.
    pid: u32,
    part: Option<Part>,
    panic: Option<Payload>,
}

struct Slot {
    lock: UnsafeCell<libc::pthread_mutex_t>,
    cond: UnsafeCell<libc::pthread_cond_t>,
    state: UnsafeCell<State>,
}

// SAFETY: `state` is only reached through `Held`, that is with `lock`
// held; the mutex and the condition variable are made for sharing between
// threads (a static one is never moved). The part's pointer is to a `Sync`
// closure that outlives its use (`run_parts`).
unsafe impl Sync for Slot {}

impl Slot {
    const fn new() -> Slot {
        Slot {
            lock: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            cond: UnsafeCell::new(libc::PTHREAD_COND_INITIALIZER),
            state: UnsafeCell::new(State {
                phase: Phase::Empty,
                pid: 0,
                part: None,
                panic: None,
            }),
        }
    }

    fn lock(&self) -> Held<'_> {
        // SAFETY: a statically initialised mutex, never moved; the guard
        // unlocks it on this thread.
        let rc = unsafe { libc::pthread_mutex_lock(self.lock.get()) };
        debug_assert_eq!(rc, 0);
        Held(self)
    }

    fn try_lock(&self) -> Option<Held<'_>> {
        // SAFETY: as in `lock`.
        let rc = unsafe { libc::pthread_mutex_trylock(self.lock.get()) };
        // Only a lock taken makes a guard (whose drop unlocks).
        (rc == 0).then(|| Held(self))
    }
}

/// A slot whose mutex this thread holds.
struct Held<'a>(&'a Slot);

impl Held<'_> {
    fn state(&mut self) -> &mut State {
        // SAFETY: the mutex is held, so no other thread reaches `state`;
        // the borrow ends with `self`'s.
        unsafe { &mut *self.0.state.get() }
    }

    /// Waits for a broadcast (or a spurious wake-up); the mutex is held
    /// again on return.
    fn wait(&mut self) {
        let slot = self.0;
        // SAFETY: the mutex is held by this thread, as the call needs.
        unsafe { libc::pthread_cond_wait(slot.cond.get(), slot.lock.get()) };
    }

    /// Wakes whoever waits on the slot (its thread, or the call).
    fn broadcast(&mut self) {
        // SAFETY: a statically initialised condition variable.
        unsafe { libc::pthread_cond_broadcast(self.0.cond.get()) };
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // SAFETY: this guard's thread locked the mutex.
        unsafe { libc::pthread_mutex_unlock(self.0.lock.get()) };
    }
}

const SLOTS: usize = MAX_THREADS - 1;
static CREW: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];

/// The slot, locked, once `ready` holds for its state (spinning for up to
/// `SPIN`, then sleeping).
fn wait_for(slot: &Slot, ready: impl Fn(&State) -> bool) -> Held<'_> {
    let spin_end = Instant::now() + SPIN;
    loop {
        if let Some(mut h) = slot.try_lock() {
            if ready(h.state()) {
                return h;
            }
        }
        if Instant::now() >= spin_end {
            break;
        }
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }
    let mut h = slot.lock();
    while !ready(h.state()) {
        h.wait();
    }
    h
}

/// A kept thread's life: the parts calls post to its slot, in turn.
fn serve(slot: &'static Slot) {
    loop {
        let mut h = wait_for(slot, |s| s.phase == Phase::Posted);
        let st = h.state();
        let part = st.part.take();
        st.phase = Phase::Running;
        drop(h);
        let result = catch_unwind(AssertUnwindSafe(|| {
            if let Some(p) = part {
                // SAFETY: the posting call waits for this part's end
                // before it returns or unwinds (`run_parts`), so the
                // closure is alive; it is `Sync`, so calling it from here
                // is sound.
                unsafe { (*p.work)(p.k) }
            }
        }));
        let mut h = slot.lock();
        let st = h.state();
        st.panic = result.err();
        st.phase = Phase::Done;
        h.broadcast();
    }
}

/// A slot for one part of a call in process `pid`: an idle kept thread's,
/// or an empty slot whose thread this starts; `None` when every slot is
/// taken or the thread cannot start.
fn claim(pid: u32) -> Option<&'static Slot> {
    if super::spawn_refused() {
        return None;
    }
    for slot in &CREW {
        let Some(mut h) = slot.try_lock() else {
            continue;
        };
        let st = h.state();
        if st.pid == pid && st.phase == Phase::Idle {
            st.phase = Phase::Claimed;
            return Some(slot);
        }
        if st.pid == pid && st.phase != Phase::Empty {
            continue;
        }
        // No thread of this process serves the slot (never started, ended,
        // or the parent's before a fork): start one.
        if st.pid != pid {
            // SAFETY: the slot is from the process this one was forked
            // from (or never used). The condition variable may count that
            // process's waiters, whom no one here can wake (a broadcast
            // would wait for them forever), so it starts afresh. No thread
            // of this process uses it: that would have set `pid`, under
            // the mutex held here.
            unsafe { *slot.cond.get() = libc::PTHREAD_COND_INITIALIZER };
        }
        *st = State {
            phase: Phase::Claimed,
            pid,
            part: None,
            panic: None,
        };
        drop(h);
        let started = std::thread::Builder::new()
            .name("hurray-coo".into())
            .spawn(move || serve(slot))
            .is_ok();
        if started {
            return Some(slot);
        }
        slot.lock().state().phase = Phase::Empty;
        return None;
    }
    None
}

/// `work(k)` for k in `0..n`: k in `1..MAX_THREADS` each on a kept thread,
/// 0 and any k without one on the calling thread. A panic in any part continues on the
/// calling thread once every part has ended.
pub(super) fn run_parts(n: usize, work: &(dyn Fn(usize) + Sync)) {
    let kept = n.min(MAX_THREADS);
    let pid = std::process::id();
    let erased = work as *const (dyn Fn(usize) + Sync + '_);
    // SAFETY: only the lifetime bound changes. Every part posted below is
    // waited for (to `Done`) before this function returns, and nothing
    // between posting and waiting can unwind: the caller's own parts run
    // under `catch_unwind`.
    let erased: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(erased) };
    let mut crew: [Option<&'static Slot>; MAX_THREADS] = [None; MAX_THREADS];
    for (k, c) in crew.iter_mut().enumerate().take(kept).skip(1) {
        *c = claim(pid);
        if let Some(slot) = c {
            post(slot, Part { work: erased, k });
        }
    }
    let mut first_panic = catch_unwind(AssertUnwindSafe(|| work(0))).err();
    for k in 1..n {
        if crew.get(k).is_none_or(|c| c.is_none()) {
            let r = catch_unwind(AssertUnwindSafe(|| work(k))).err();
            first_panic = first_panic.or(r);
        }
    }
    // A part whose thread has not started it yet (asleep, or off its core)
    // runs here instead: that ends no later than waiting for it would.
    for (k, c) in crew.iter_mut().enumerate().take(kept).skip(1) {
        if c.is_some_and(take_back) {
            *c = None;
            let r = catch_unwind(AssertUnwindSafe(|| work(k))).err();
            first_panic = first_panic.or(r);
        }
    }
    for slot in crew.iter().take(kept).flatten() {
        first_panic = first_panic.or(collect(slot));
    }
    if let Some(p) = first_panic {
        resume_unwind(p);
    }
}

/// Hands `part` to the thread of `slot`, which the caller has claimed.
fn post(slot: &Slot, part: Part) {
    let mut h = slot.lock();
    let st = h.state();
    st.part = Some(part);
    st.phase = Phase::Posted;
    h.broadcast();
}

/// Whether the part posted to `slot` was taken back, its thread not having
/// started it (the slot is idle again, and its thread waits on).
fn take_back(slot: &Slot) -> bool {
    let mut h = slot.lock();
    let st = h.state();
    if st.phase != Phase::Posted {
        return false;
    }
    st.part = None;
    st.phase = Phase::Idle;
    true
}

/// Waits for the part posted to `slot` to end and gives the slot back
/// (idle); what the part panicked with, if it did.
fn collect(slot: &Slot) -> Option<Payload> {
    let mut h = wait_for(slot, |s| s.phase == Phase::Done);
    let st = h.state();
    st.phase = Phase::Idle;
    st.panic.take()
}

/// How many slots have a thread of this process (tests).
#[cfg(test)]
pub(super) fn live() -> usize {
    let pid = std::process::id();
    CREW.iter()
        .filter(|s| {
            let mut h = s.lock();
            let st = h.state();
            st.pid == pid && st.phase != Phase::Empty
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A slot of the test's own (the library's are shared with every test
    /// running at the same time): parts posted to its thread run there, in
    /// turn, each collected once it has ended.
    #[test]
    fn a_kept_thread_runs_the_parts_posted_to_it() {
        static SLOT: Slot = Slot::new();
        static RAN: AtomicUsize = AtomicUsize::new(0);
        SLOT.lock().state().phase = Phase::Claimed;
        std::thread::spawn(move || serve(&SLOT));
        let on = std::sync::Mutex::new(Vec::new());
        let work = |k: usize| {
            RAN.fetch_add(k, Ordering::SeqCst);
            on.lock().unwrap().push(std::thread::current().id());
        };
        let erased = &work as &(dyn Fn(usize) + Sync) as *const (dyn Fn(usize) + Sync + '_);
        // SAFETY: each part is collected before `work` goes out of scope.
        let erased: *const (dyn Fn(usize) + Sync + 'static) =
            unsafe { std::mem::transmute(erased) };
        for (k, pause) in [(3, 0), (4, 5), (5, 0)] {
            // After a pause longer than the spin, the thread sleeps and the
            // post wakes it.
            std::thread::sleep(Duration::from_millis(pause));
            post(&SLOT, Part { work: erased, k });
            assert!(collect(&SLOT).is_none());
            assert_eq!(SLOT.lock().state().phase, Phase::Idle);
            SLOT.lock().state().phase = Phase::Claimed;
        }
        assert_eq!(RAN.load(Ordering::SeqCst), 12);
        let on = on.into_inner().unwrap();
        assert_eq!(on.len(), 3);
        assert!(on
            .iter()
            .all(|&t| t == on[0] && t != std::thread::current().id()));
    }

    /// A part that no thread has started is taken back once, and leaves
    /// the slot idle; a part already started is not.
    #[test]
    fn an_unstarted_part_is_taken_back() {
        static SLOT: Slot = Slot::new();
        let work = |_: usize| {};
        let erased = &work as &(dyn Fn(usize) + Sync) as *const (dyn Fn(usize) + Sync + '_);
        // SAFETY: no thread serves SLOT, so the part is never called.
        let erased: *const (dyn Fn(usize) + Sync + 'static) =
            unsafe { std::mem::transmute(erased) };
        SLOT.lock().state().phase = Phase::Claimed;
        post(&SLOT, Part { work: erased, k: 1 });
        assert!(take_back(&SLOT));
        assert_eq!(SLOT.lock().state().phase, Phase::Idle);
        assert!(SLOT.lock().state().part.is_none());
        assert!(!take_back(&SLOT));
        SLOT.lock().state().phase = Phase::Running;
        assert!(!take_back(&SLOT), "a started part stays with its thread");
    }

    /// A `try_lock` that fails leaves the lock to its holder (a guard made
    /// for a lock not taken would release it when dropped).
    #[test]
    fn a_failed_try_lock_leaves_the_holder_its_lock() {
        static SLOT: Slot = Slot::new();
        let held = SLOT.lock();
        std::thread::scope(|s| {
            s.spawn(|| {
                assert!(SLOT.try_lock().is_none());
                assert!(SLOT.try_lock().is_none(), "the first try released the lock");
            })
            .join()
            .unwrap()
        });
        drop(held);
        assert!(SLOT.try_lock().is_some());
    }

    /// A part that panics on a kept thread: the panic reaches the caller,
    /// and the slot serves the next call.
    #[test]
    fn a_panic_on_a_kept_thread_reaches_the_caller_and_the_thread_stays() {
        let r = catch_unwind(|| {
            run_parts(2, &|k| {
                if k == 1 {
                    panic!("part 1");
                }
            })
        });
        assert!(r.is_err());
        let name = std::sync::Mutex::new(None);
        let started = std::sync::atomic::AtomicBool::new(false);
        run_parts(2, &|k| {
            if k == 1 {
                *name.lock().unwrap() = std::thread::current().name().map(String::from);
                started.store(true, Ordering::SeqCst);
            } else {
                // Part 0 waits for part 1 to start, which the caller would
                // otherwise take back if its thread were slow to wake.
                let t = Instant::now();
                while !started.load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(5) {
                    std::hint::spin_loop();
                }
            }
        });
        // Part 1 ran on a kept thread, unless none could be had (63 tests
        // holding every slot, or another test refusing new threads for a
        // moment), when it ran on the caller.
        let name = name.into_inner().unwrap();
        let here = std::thread::current().name().map(String::from);
        assert!(
            name.as_deref() == Some("hurray-coo") || name == here,
            "{name:?}"
        );
        assert!(live() >= 1);
    }

    /// When the caller's own part panics, the call still waits for the
    /// other parts to end before the panic leaves it: they borrow the
    /// caller's data.
    #[test]
    fn a_panic_on_the_caller_waits_for_the_other_parts() {
        let done = std::sync::atomic::AtomicBool::new(false);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run_parts(2, &|k| {
                if k == 0 {
                    panic!("part 0");
                }
                std::thread::sleep(Duration::from_millis(100));
                done.store(true, Ordering::SeqCst);
            })
        }));
        assert!(r.is_err());
        assert!(
            done.load(Ordering::SeqCst),
            "part 1 ended before the unwind"
        );
    }
}
