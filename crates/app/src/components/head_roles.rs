//! The head roles table: every head's role scores (attnlab_model::roles), sortable by any
//! column; a row's button selects its head.

use std::rc::Rc;

use attnlab_model::roles::{Role, Scores};
use yew::prelude::*;

use crate::i18n::{role_text, Key, Lang};
use crate::state::ProbeResult;

/// What the rows are ordered by: layer and head, or one role's score (highest first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SortBy {
    Head,
    Role(Role),
}

/// The order of rows (indices into `scores`): by head, or by a role's score, highest first,
/// undefined scores last, ties by head.
pub fn order(scores: &[Scores], by: SortBy) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    if let SortBy::Role(r) = by {
        idx.sort_by(|&a, &b| {
            let key = |i: usize| scores[i].get(r).unwrap_or(f32::NEG_INFINITY);
            key(b).total_cmp(&key(a)).then(a.cmp(&b))
        });
    }
    idx
}

/// How many rows the table shows until asked for all (a model with many heads — GPT-2 small
/// has 144 — would otherwise lay out a table of 1,440 numbers per keystroke).
pub const FIRST_ROWS: usize = 32;

/// The rows shown: the first `limit` of `order`, plus the selected head's row where it falls
/// past them (it stays in view wherever the sort puts it).
pub fn shown_rows(order: &[usize], selected: usize, limit: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = order.iter().copied().take(limit).collect();
    if !rows.contains(&selected) && order.contains(&selected) {
        rows.push(selected);
    }
    rows
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub roles: Rc<Vec<Scores>>,
    pub n_head: usize,
    /// None while the probe runs; its result or why it failed.
    pub probe: Option<Result<Rc<ProbeResult>, String>>,
    pub selected: (usize, usize),
    pub on_select: Callback<(usize, usize)>,
}

#[function_component]
pub fn HeadRoles(props: &Props) -> Html {
    let lang = props.lang;
    let sort = use_state(|| SortBy::Head);
    let all = use_state(|| false);
    let nh = props.n_head.max(1);
    let total = props.roles.len();
    let header = |by: SortBy, label: String, title: String, class: &'static str| {
        let active = *sort == by;
        let onclick = {
            let sort = sort.clone();
            Callback::from(move |_| sort.set(by))
        };
        html! {
            <th scope="col" class={class} aria-sort={match (active, by) { (false, _) => "none", (true, SortBy::Head) => "ascending", _ => "descending" }} {title}>
                <button type="button" class={classes!("sort", active.then_some("active"))} {onclick}>
                    { label }{ match (active, by) { (false, _) => "", (true, SortBy::Head) => " ▴", _ => " ▾" } }
                </button>
            </th>
        }
    };
    let cols = Role::ALL.iter().map(|&r| {
        let (name, _, rule) = role_text(r);
        let title = format!(
            "{} ({} {:.2})",
            rule.text(lang),
            Key::Threshold.text(lang),
            r.threshold()
        );
        header(
            SortBy::Role(r),
            name.text(lang).to_string(),
            title,
            if r.needs_probe() { "probe" } else { "" },
        )
    });
    let selected_index = props.selected.0 * nh + props.selected.1;
    let limit = if *all { total } else { FIRST_ROWS };
    let shown = shown_rows(&order(&props.roles, *sort), selected_index, limit);
    let more = (total > FIRST_ROWS).then(|| {
        let onclick = {
            let all = all.clone();
            Callback::from(move |_| all.set(!*all))
        };
        let (note, button) = if *all {
            (String::new(), Key::RolesShowFirst.text(lang).replace("{n}", &FIRST_ROWS.to_string()))
        } else {
            (
                Key::RolesShownOf
                    .text(lang)
                    .replace("{n}", &shown.len().to_string())
                    .replace("{total}", &total.to_string()),
                Key::RolesShowAll.text(lang).replace("{n}", &total.to_string()),
            )
        };
        html! {
            <p class="help roles-more">
                { note }{ " " }
                <button type="button" id="roles-all" aria-expanded={all.to_string()} {onclick}>{ button }</button>
            </p>
        }
    });
    let rows = shown.into_iter().map(|i| {
        let (l, h) = (i / nh, i % nh);
        let s = props.roles[i];
        let selected = props.selected == (l, h);
        let onclick = {
            let cb = props.on_select.clone();
            Callback::from(move |_| cb.emit((l, h)))
        };
        let cells = Role::ALL.iter().map(|&r| match s.get(r) {
            Some(v) => html! {
                <td class={classes!("num", s.has(r).then_some("passes"))}
                    style={format!("--score: {v:.3}")}>{ format!("{v:.3}") }</td>
            },
            None => html! { <td class="num none">{ "—" }</td> },
        });
        let role = match s.strongest() {
            Some((r, _)) => html! {
                <td><span class="role-badge" data-role={r.code()}>{ role_text(r).0.text(lang) }</span></td>
            },
            None => html! { <td class="none">{ Key::NoRole.text(lang) }</td> },
        };
        html! {
            <tr class={classes!(selected.then_some("selected"))} data-row-head={format!("{l}.{h}")}>
                <th scope="row">
                    <button type="button" {onclick} aria-pressed={selected.to_string()}>
                        { format!("L{l} H{h}") }
                    </button>
                </th>
                { for cells }
                { role }
            </tr>
        }
    });
    let probe = match &props.probe {
        None => {
            html! { <p class="help" id="probe-status" role="status">{ Key::ProbeRunning.text(lang) }</p> }
        }
        Some(Err(e)) => html! {
            <p class="help" id="probe-status" role="status">{ format!("{}: {e}", Key::ProbeFailed.text(lang)) }</p>
        },
        Some(Ok(p)) => {
            let about = Key::ProbeAbout
                .text(lang)
                .replace("{n}", &p.half.to_string())
                .replace("{seed}", &p.seed.to_string());
            html! {
                <p class="help" id="probe-status">
                    { about }
                    if let Some(why) = &p.clamped { { format!(" — {why}") } }
                </p>
            }
        }
    };
    html! {
        <section class="card roles-card" aria-labelledby="roles-h">
            <h2 id="roles-h">{ Key::HeadRoles.text(lang) }</h2>
            <p class="help">{ Key::HeadRolesHelp.text(lang) }</p>
            { probe }
            <div class="table-scroll">
                <table id="head-roles" class="roles">
                    <thead><tr>
                        { header(SortBy::Head, format!("{} · {}", Key::Layer.text(lang), Key::Head.text(lang)), String::new(), "") }
                        { for cols }
                        <th scope="col">{ Key::RoleColumn.text(lang) }</th>
                    </tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            </div>
            { for more }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sort_by_a_role_highest_first_with_undefined_last() {
        let mut s = vec![Scores::default(); 4];
        s[0].set(Role::Previous, Some(0.2));
        s[1].set(Role::Previous, Some(0.9));
        s[3].set(Role::Previous, Some(0.2));
        assert_eq!(order(&s, SortBy::Role(Role::Previous)), [1, 0, 3, 2]);
        assert_eq!(order(&s, SortBy::Head), [0, 1, 2, 3]);
    }

    #[test]
    fn the_first_rows_are_shown_and_the_selected_head_stays_among_them() {
        let order: Vec<usize> = (0..144).rev().collect();
        let rows = shown_rows(&order, 120, FIRST_ROWS);
        assert_eq!(rows.len(), FIRST_ROWS, "120 is among the first 32 of 143…0");
        assert_eq!(rows[0], 143);
        let rows = shown_rows(&order, 3, FIRST_ROWS);
        assert_eq!(rows.len(), FIRST_ROWS + 1);
        assert_eq!(
            *rows.last().unwrap(),
            3,
            "the selected head is added at the end"
        );
        assert_eq!(
            shown_rows(&[0, 1, 2], 1, FIRST_ROWS),
            [0, 1, 2],
            "a small model: every row"
        );
        assert_eq!(shown_rows(&order, 3, 144).len(), 144, "all, once asked");
    }
}
