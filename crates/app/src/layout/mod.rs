//! The page's layouts, one per mode: the whole page (`page`), the lesson beside it or alone
//! (`lesson`), one view embedded in another site (`embed`) and one view presented full-screen
//! (`present`). `app.rs` holds the page (its state, engine and callbacks) and hands each
//! layout what it draws from (`Ctx`); `parts` holds what the layouts share (the notices,
//! the text box, the views every mode picks from).

mod embed;
mod lesson;
mod page;
mod parts;
mod present;

pub use embed::embed;
pub use page::page;
pub use parts::Ctx;
pub use present::present;
