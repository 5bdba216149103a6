//! The page's request queue: one forward at a time, the newest request next, older results
//! dropped; a request may continue itself (a generation's next step, `Run::then`) while no
//! newer one came, and may be withdrawn (the result on screen already answers the newest
//! request); follow-up jobs (the logit lens or the flow strip of the result on screen) run
//! when no request waits and only while no newer request came, the newest of each kind; background jobs (the head-role probe) run
//! last and are always reported. What runs a request (and where, and what happens when a
//! backend fails) is the engine's business (`crate::engine`); this file only orders and drops.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

/// What the queue runs its jobs on.
pub trait Run {
    type Job;
    type Output;
    fn run(&self, job: &Self::Job) -> impl Future<Output = Self::Output>;
    /// An output that came too late to be shown (a newer request is queued). Whatever of it
    /// must not be lost (e.g. a notice that the GPU failed) the engine keeps for the next.
    fn dropped(&self, _output: Self::Output) {}
    /// The request that continues `job` after its `output` was shown (a generation's next
    /// step), if any. It runs as the newest request unless a newer one came meanwhile.
    fn then(&self, _job: &Self::Job, _output: &Self::Output) -> Option<Self::Job> {
        None
    }
    /// Whether two follow-up jobs are of one kind, so that the newer replaces the older while
    /// it waits (the lens at another position); jobs of other kinds wait side by side (the
    /// lens and the flow strip each get their answer).
    fn same_kind(&self, _a: &Self::Job, _b: &Self::Job) -> bool {
        true
    }
}

pub struct Runner<E: Run> {
    engine: E,
    /// The last number handed to a job (its generation).
    numbered: Cell<u64>,
    latest: Cell<u64>,
    pending: RefCell<Option<(u64, E::Job)>>,
    /// The follow-up jobs waiting, each with the request whose result it is about; one of
    /// each kind (`Run::same_kind`), oldest first.
    follow_up: RefCell<VecDeque<(u64, E::Job, u64)>>,
    background: RefCell<VecDeque<(u64, E::Job)>>,
    busy: Cell<bool>,
    /// Set when another model replaced this runner's: its results are no longer reported.
    retired: Cell<bool>,
    report: Box<dyn Fn(u64, E::Output)>,
}

/// The work a submit started; the caller spawns it (`spawn_local` in the page).
pub type Drain = Pin<Box<dyn Future<Output = ()>>>;

impl<E: Run + 'static> Runner<E> {
    /// `report(generation, output)` is called for every result that is still the newest.
    /// Jobs are numbered after `after` (the runner this one replaces: `last_number`), so that
    /// a new model's results come after the old one's.
    pub fn new(engine: E, after: u64, report: impl Fn(u64, E::Output) + 'static) -> Rc<Self> {
        Rc::new(Runner {
            engine,
            numbered: Cell::new(after),
            latest: Cell::new(0),
            pending: RefCell::new(None),
            follow_up: RefCell::new(VecDeque::new()),
            background: RefCell::new(VecDeque::new()),
            busy: Cell::new(false),
            retired: Cell::new(false),
            report: Box::new(report),
        })
    }

    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Stops reporting results (another model took over).
    pub fn retire(&self) {
        self.retired.set(true);
        self.pending.borrow_mut().take();
        self.follow_up.borrow_mut().clear();
        self.background.borrow_mut().clear();
    }

    fn next_generation(&self) -> u64 {
        self.numbered.set(self.numbered.get() + 1);
        self.numbered.get()
    }

    /// The last number handed to a job.
    pub fn last_number(&self) -> u64 {
        self.numbered.get()
    }

    /// Queues `job`, replacing any queued one that has not started. Returns its generation
    /// and, when nothing was running, the work to spawn.
    pub fn submit(self: &Rc<Self>, job: E::Job) -> (u64, Option<Drain>) {
        let generation = self.next_generation();
        self.latest.set(generation);
        *self.pending.borrow_mut() = Some((generation, job));
        self.start(generation)
    }

    /// Nothing more is asked: the result on screen, of request `shown`, already answers the
    /// newest request. A queued request is dropped, and the one running, when it ends, is
    /// not reported and not continued; follow-ups about `shown` stay wanted (those about any
    /// other go), so its lens and flow strip still come.
    pub fn withdraw(&self, shown: u64) {
        self.latest.set(shown);
        self.pending.borrow_mut().take();
        self.follow_up
            .borrow_mut()
            .retain(|&(_, _, about)| about == shown);
    }

    /// Queues a job about the result of request `about` (replacing a queued follow-up of its
    /// kind): it runs once no request waits, never in place of one, and only while `about`
    /// is still the newest request — a newer text makes it stale, and a stale one is not
    /// even run.
    pub fn submit_follow_up(self: &Rc<Self>, job: E::Job, about: u64) -> (u64, Option<Drain>) {
        let generation = self.next_generation();
        {
            let mut waiting = self.follow_up.borrow_mut();
            waiting.retain(|(_, j, _)| !self.engine.same_kind(j, &job));
            waiting.push_back((generation, job, about));
        }
        self.start(generation)
    }

    /// Queues a job that runs once no request is waiting and whose output is reported even
    /// though newer requests came after it (it answers no request: nothing makes it stale).
    pub fn submit_background(self: &Rc<Self>, job: E::Job) -> (u64, Option<Drain>) {
        let generation = self.next_generation();
        self.background.borrow_mut().push_back((generation, job));
        self.start(generation)
    }

    fn start(self: &Rc<Self>, generation: u64) -> (u64, Option<Drain>) {
        if self.busy.replace(true) {
            return (generation, None);
        }
        let me = self.clone();
        (generation, Some(Box::pin(async move { me.drain().await })))
    }

    async fn drain(&self) {
        loop {
            // a request first, then a follow-up, then the background
            let next = self
                .pending
                .borrow_mut()
                .take()
                .map(|(g, j)| (g, j, Some(g)));
            let next = next.or_else(|| {
                let mut waiting = self.follow_up.borrow_mut();
                // those about an older result are dropped unrun
                waiting.retain(|&(_, _, about)| about == self.latest.get());
                waiting.pop_front().map(|(g, j, about)| (g, j, Some(about)))
            });
            let next = next.or_else(|| {
                let b = self.background.borrow_mut().pop_front();
                b.map(|(g, j)| (g, j, None))
            });
            // `current`: the newest request this job answers to (None: always reported)
            let Some((generation, job, current)) = next else {
                break;
            };
            let out = self.engine.run(&job).await;
            let fresh = current.is_none_or(|c| c == self.latest.get());
            if fresh && !self.retired.get() {
                // a request still the newest may continue (nothing newer is queued then)
                let next = (current == Some(generation))
                    .then(|| self.engine.then(&job, &out))
                    .flatten();
                (self.report)(generation, out);
                if let Some(next) = next.filter(|_| self.latest.get() == generation) {
                    let g = self.next_generation();
                    self.latest.set(g);
                    *self.pending.borrow_mut() = Some((g, next));
                }
            } else {
                self.engine.dropped(out);
            }
        }
        self.busy.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll, Waker};

    /// An engine whose every run waits until the test opens its gate; it logs what it ran.
    #[derive(Default)]
    struct Gated {
        open: Rc<Cell<usize>>,
        ran: RefCell<Vec<&'static str>>,
        dropped: RefCell<Vec<&'static str>>,
    }

    struct Gate {
        open: Rc<Cell<usize>>,
    }

    impl Future for Gate {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            if self.open.get() > 0 {
                self.open.set(self.open.get() - 1);
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    impl Run for Gated {
        type Job = &'static str;
        type Output = &'static str;
        /// "step 1" continues as "step 2", which continues as "step 3", which ends.
        fn then(&self, job: &&'static str, _: &&'static str) -> Option<&'static str> {
            match *job {
                "step 1" => Some("step 2"),
                "step 2" => Some("step 3"),
                _ => None,
            }
        }
        async fn run(&self, job: &&'static str) -> &'static str {
            self.ran.borrow_mut().push(job);
            Gate {
                open: self.open.clone(),
            }
            .await;
            job
        }
        /// "lens …" and "flow …" are two kinds.
        fn same_kind(&self, a: &&'static str, b: &&'static str) -> bool {
            a.split(' ').next() == b.split(' ').next()
        }
        fn dropped(&self, out: &'static str) {
            self.dropped.borrow_mut().push(out);
        }
    }

    /// What the runner reported: (generation, output).
    type Shown = Rc<RefCell<Vec<(u64, &'static str)>>>;

    fn setup() -> (Rc<Runner<Gated>>, Shown) {
        setup_after(0)
    }

    fn setup_after(after: u64) -> (Rc<Runner<Gated>>, Shown) {
        let shown = Rc::new(RefCell::new(Vec::new()));
        let s = shown.clone();
        let r = Runner::new(Gated::default(), after, move |g, out| {
            s.borrow_mut().push((g, out))
        });
        (r, shown)
    }

    fn poll(d: &mut Drain) -> bool {
        d.as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_ready()
    }

    #[test]
    fn the_newest_request_runs_next_and_stale_results_are_dropped() {
        let (r, shown) = setup();
        let (ga, drain) = r.submit("a");
        let mut drain = drain.expect("the first submit starts the work");
        assert!(!poll(&mut drain), "a is running, waiting for its gate");
        // b and c arrive while a runs: c replaces b, which never runs
        let (_, none) = r.submit("b");
        assert!(none.is_none(), "one forward at a time");
        let (gc, _) = r.submit("c");
        assert!(gc > ga);
        r.engine().open.set(1);
        assert!(!poll(&mut drain), "a finished; c runs now");
        assert_eq!(*r.engine().ran.borrow(), ["a", "c"]);
        assert!(
            shown.borrow().is_empty(),
            "a is stale: c was asked for after it"
        );
        assert_eq!(
            *r.engine().dropped.borrow(),
            ["a"],
            "the engine hears of the drop"
        );
        r.engine().open.set(1);
        assert!(poll(&mut drain), "the queue is empty");
        assert_eq!(*shown.borrow(), [(gc, "c")]);
        // idle again: the next submit starts new work
        let (gd, drain) = r.submit("d");
        let mut drain = drain.expect("idle → a new drain");
        r.engine().open.set(1);
        assert!(poll(&mut drain));
        assert_eq!(shown.borrow().last(), Some(&(gd, "d")));
    }

    #[test]
    fn a_retired_runner_reports_nothing_more() {
        let (r, shown) = setup();
        let (_, drain) = r.submit("a");
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain));
        r.submit("b");
        r.retire();
        r.engine().open.set(5);
        assert!(poll(&mut drain));
        assert!(shown.borrow().is_empty());
        assert_eq!(
            *r.engine().ran.borrow(),
            ["a"],
            "the queued request is dropped too"
        );
    }

    #[test]
    fn background_jobs_wait_for_requests_and_are_never_stale() {
        let (r, shown) = setup();
        let (ga, drain) = r.submit("a");
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain));
        let (gp, none) = r.submit_background("probe");
        assert!(none.is_none(), "a is running");
        let (gb, _) = r.submit("b");
        r.engine().open.set(1);
        assert!(!poll(&mut drain), "a done (stale); b runs before the probe");
        assert_eq!(*r.engine().ran.borrow(), ["a", "b"]);
        r.engine().open.set(1);
        assert!(!poll(&mut drain), "b done; the probe runs");
        let (gc, _) = r.submit("c");
        r.engine().open.set(2);
        assert!(poll(&mut drain));
        assert_eq!(*r.engine().ran.borrow(), ["a", "b", "probe", "c"]);
        assert!(gp > ga && gp < gb && gc > gb);
        assert_eq!(
            *shown.borrow(),
            [(gb, "b"), (gp, "probe"), (gc, "c")],
            "the probe is reported though c was asked for after it"
        );
        // a retired runner drops its queued background jobs
        let (_, drain) = r.submit("d");
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain), "d is running");
        r.submit_background("probe 2");
        r.retire();
        r.engine().open.set(5);
        assert!(poll(&mut drain));
        assert_eq!(
            r.engine().ran.borrow().last(),
            Some(&"d"),
            "probe 2 never ran"
        );
        assert_eq!(shown.borrow().len(), 3);
    }

    #[test]
    fn a_follow_up_never_replaces_a_request_and_goes_stale_with_a_newer_one() {
        let (r, shown) = setup();
        let (ga, drain) = r.submit("a");
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain), "a is running");
        let (gb, _) = r.submit("b");
        // about a, asked while b waits: b runs, and the follow-up (stale) never does
        r.submit_follow_up("lens of a", ga);
        r.engine().open.set(1);
        assert!(!poll(&mut drain), "a done; b (still asked for) runs");
        r.engine().open.set(1);
        assert!(poll(&mut drain), "b done; nothing else to run");
        assert_eq!(*r.engine().ran.borrow(), ["a", "b"]);
        // about b, the newest: runs and is reported
        let (_, drain) = r.submit_follow_up("lens of b", gb);
        let mut drain = drain.unwrap();
        r.engine().open.set(1);
        assert!(poll(&mut drain));
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(reported, ["b", "lens of b"]);
        // a request while the follow-up runs makes it stale; a second follow-up replaces
        // the first that has not started
        let (_, drain) = r.submit_follow_up("lens 2 of b", gb);
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain), "the follow-up is running");
        let (gc, _) = r.submit("c");
        r.submit_follow_up("lens 1 of c", gc);
        r.submit_follow_up("lens 2 of c", gc);
        r.engine().open.set(3);
        assert!(poll(&mut drain));
        assert_eq!(
            &r.engine().ran.borrow()[3..],
            ["lens 2 of b", "c", "lens 2 of c"]
        );
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(reported, ["b", "lens of b", "c", "lens 2 of c"]);
        assert_eq!(r.engine().dropped.borrow().last(), Some(&"lens 2 of b"));
        // follow-ups of two kinds asked while a request runs: each runs, the newest of its
        // kind, oldest kind first
        let (gd, drain) = r.submit("d");
        let mut drain = drain.unwrap();
        r.submit_follow_up("lens 1 of d", gd);
        r.submit_follow_up("flow 1 of d", gd);
        r.submit_follow_up("lens 2 of d", gd);
        r.engine().open.set(3);
        assert!(poll(&mut drain));
        assert_eq!(
            &r.engine().ran.borrow()[6..],
            ["d", "flow 1 of d", "lens 2 of d"]
        );
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(&reported[4..], ["d", "flow 1 of d", "lens 2 of d"]);
    }

    #[test]
    fn a_request_continues_until_it_ends_or_a_newer_one_comes() {
        let (r, shown) = setup();
        let (_, drain) = r.submit("step 1");
        let mut drain = drain.unwrap();
        r.engine().open.set(3);
        assert!(poll(&mut drain), "step 1 → 2 → 3, then nothing");
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(reported, ["step 1", "step 2", "step 3"]);
        let gens: Vec<u64> = shown.borrow().iter().map(|x| x.0).collect();
        assert!(
            gens.windows(2).all(|w| w[1] > w[0]),
            "each step is a newer result"
        );
        // a request typed while step 1 runs: step 1 is stale and does not continue
        shown.borrow_mut().clear();
        let (_, drain) = r.submit("step 1");
        let mut drain = drain.unwrap();
        assert!(!poll(&mut drain));
        r.submit("typed");
        r.engine().open.set(2);
        assert!(poll(&mut drain));
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(reported, ["typed"]);
        // withdrawn while step 2 runs: step 2 is not shown and step 3 never runs
        shown.borrow_mut().clear();
        let (_, drain) = r.submit("step 1");
        let mut drain = drain.unwrap();
        r.engine().open.set(1);
        assert!(!poll(&mut drain), "step 1 shown; step 2 runs");
        let step1 = shown.borrow()[0].0;
        r.withdraw(step1);
        // the result on screen is still asked about: its follow-ups run and are reported
        r.submit_follow_up("lens of step 1", step1);
        r.engine().open.set(5);
        assert!(poll(&mut drain));
        let reported: Vec<&str> = shown.borrow().iter().map(|x| x.1).collect();
        assert_eq!(reported, ["step 1", "lens of step 1"]);
        assert_eq!(
            &r.engine().ran.borrow()[r.engine().ran.borrow().len() - 2..],
            ["step 2", "lens of step 1"]
        );
        assert_eq!(r.engine().dropped.borrow().last(), Some(&"step 2"));
    }

    #[test]
    fn generations_increase_across_runners() {
        let (a, _) = setup();
        let (g1, _) = a.submit("x");
        let (b, _) = setup_after(a.last_number());
        let (g2, _) = b.submit("y");
        assert!(g2 > g1, "a new model's results come after the old one's");
    }
}
