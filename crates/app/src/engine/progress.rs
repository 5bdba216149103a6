//! A long forward's progress on the CPU worker, for the bar under the text box: the worker
//! says how many blocks are done (`Reply::Progress`), the client reports it here, and the
//! components that show it (`use_forward_progress`) are told. `None`: no long forward runs.

use std::cell::{Cell, RefCell};

use yew::prelude::*;

thread_local! {
    static DONE: Cell<Option<usize>> = const { Cell::new(None) };
    /// The components listening, by a number of their own.
    static LISTENERS: RefCell<Vec<(u32, Callback<Option<usize>>)>> = const { RefCell::new(Vec::new()) };
    static NEXT: Cell<u32> = const { Cell::new(0) };
}

/// How many blocks of the forward in flight are done (`None`: it is over, or none runs).
pub fn report(done: Option<usize>) {
    if DONE.with(|d| d.replace(done)) == done {
        return;
    }
    let listeners: Vec<_> =
        LISTENERS.with(|l| l.borrow().iter().map(|(_, cb)| cb.clone()).collect());
    for cb in listeners {
        cb.emit(done);
    }
}

/// The blocks done of the forward in flight, re-rendering the component as it moves.
#[hook]
pub fn use_forward_progress() -> Option<usize> {
    let done = use_state(|| DONE.with(Cell::get));
    {
        let setter = done.setter();
        use_effect_with((), move |_| {
            let me = NEXT.with(|n| {
                let me = n.get();
                n.set(me + 1);
                me
            });
            LISTENERS.with(|l| {
                l.borrow_mut()
                    .push((me, Callback::from(move |d| setter.set(d))))
            });
            move || LISTENERS.with(|l| l.borrow_mut().retain(|(id, _)| *id != me))
        });
    }
    *done
}
