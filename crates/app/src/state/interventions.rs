//! What the user changed in the model (`Interventions`): the softmax variant applied, τ, the
//! mask, ablated heads.

use std::collections::BTreeSet;

use attnlab_model::AttentionOptions;

use crate::compare::Variant;

/// τ slider range.
pub const TAU_MIN: f32 = 0.05;
pub const TAU_MAX: f32 = 5.0;

/// What the user changed in the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Interventions {
    /// The variant applied to the model (when `apply` is on) and highlighted in the comparison.
    pub variant: Variant,
    pub tau: f32,
    pub apply: bool,
    pub mask: bool,
    /// Heads switched off, as (layer, head).
    pub ablate: BTreeSet<(usize, usize)>,
}

pub enum InterventionAction {
    SetVariant(Variant),
    SetTau(f32),
    SetApply(bool),
    SetMask(bool),
    /// Switch a head (layer, head) off or back on.
    SetAblated((usize, usize), bool),
}

impl Interventions {
    /// The attention options the model runs with.
    pub fn options(&self) -> AttentionOptions {
        let mut o = if self.apply {
            self.variant.options(self.tau, self.mask)
        } else {
            Variant::Scaled.options(1.0, self.mask)
        };
        o.ablate = self.ablate.clone();
        o
    }

    pub(super) fn reduce(&mut self, a: InterventionAction) {
        match a {
            InterventionAction::SetVariant(v) => self.variant = v,
            InterventionAction::SetTau(t) => {
                if t.is_finite() {
                    self.tau = t.clamp(TAU_MIN, TAU_MAX);
                }
            }
            InterventionAction::SetApply(a) => self.apply = a,
            InterventionAction::SetMask(m) => self.mask = m,
            InterventionAction::SetAblated(lh, off) => {
                if off {
                    self.ablate.insert(lh);
                } else {
                    self.ablate.remove(&lh);
                }
            }
        }
    }
}
