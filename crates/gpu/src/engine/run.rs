//! One forward's submission, shared by both architectures' engines: the token ids and the
//! steps' params written, the dispatches recorded in one compute pass (or, profiled, each on
//! its own), the Trace's parts copied into the staging buffer and mapped; and where the time
//! went ([`Profile`]).

use super::buffers::Activations;
use super::readback::{self, Readback};
use super::slim::{self, Output, Read, SlimBack};
use crate::context::{Gpu, SLOT};
use crate::error::GpuError;
use crate::step::{Heads, Step};

/// Where the readback put what it read.
pub(super) enum Back {
    Trace(Readback),
    Slim(SlimBack),
}

impl Back {
    fn floats(&self) -> usize {
        match self {
            Back::Trace(r) => r.floats,
            Back::Slim(s) => s.floats,
        }
    }
}

/// What one forward's submission read back.
pub(super) struct Ran {
    /// The staging buffer's floats.
    pub all: Vec<f32>,
    pub readback: Back,
    /// Per kernel: dispatches and milliseconds (profiled forwards only).
    kernels: Vec<(&'static str, usize, f64)>,
    /// When the readback started (profiled forwards only).
    read_from: Option<f64>,
}

impl Ran {
    /// What was read: the Trace of a forward over `dims.t` tokens (`run`, dropped, options),
    /// or a slim result.
    pub fn output(
        &self,
        acts: &Activations,
        dims: attnlab_model::Dims,
        run: (&[u32], usize, &attnlab_model::AttentionOptions),
    ) -> Output {
        match &self.readback {
            Back::Trace(r) => Output::Trace(Box::new(r.trace(&self.all, acts, dims, run))),
            Back::Slim(s) => Output::Slim(s.read(&self.all)),
        }
    }

    /// The profile of a forward whose Trace was cut out from `assemble_from` until now.
    pub fn profile(
        self,
        incremental: bool,
        now: Option<&dyn Fn() -> f64>,
        assemble_from: Option<f64>,
    ) -> Option<Profile> {
        now.map(|now| {
            let (read, assemble) = (self.read_from.unwrap_or(0.0), assemble_from.unwrap_or(0.0));
            Profile {
                incremental,
                kernels: self.kernels,
                readback_ms: assemble - read,
                assemble_ms: now() - assemble,
                floats: self.readback.floats(),
            }
        })
    }
}

/// Runs `steps` over the tokens `run`: writes the token ids and every step's params, records
/// the dispatches in one compute pass (with `profile`: each submitted, waited for and timed
/// on its own), copies the Trace's parts into the staging buffer, submits and maps it. Shared
/// by both architectures' engines.
pub(super) async fn execute(
    gpu: &Gpu,
    acts: &Activations,
    heads: Heads,
    steps: &[Step<'_>],
    run: &[u32],
    profile: Option<&dyn Fn() -> f64>,
    read: Read<'_, '_>,
) -> Result<Ran, GpuError> {
    let after: &[Step] = match read {
        Read::Slim { pool, .. } => pool,
        Read::Trace => &[],
    };
    if steps.len() + after.len() > acts.slots {
        return Err(GpuError::TooLarge(format!(
            "{} dispatches exceed {} param slots",
            steps.len() + after.len(),
            acts.slots
        )));
    }
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let mut tok = run.to_vec();
    tok.resize(heads.positions, 0);
    let q = &gpu.queue;
    q.write_buffer(&acts.tokens, 0, bytemuck::cast_slice(&tok));
    let params: Vec<u8> = steps
        .iter()
        .chain(after)
        .flat_map(|s| s.params.iter().copied())
        .collect();
    q.write_buffer(&acts.params, 0, &params);
    let encoder = || {
        gpu.device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("forward"),
            })
    };
    // steps [from, to) in one compute pass
    let record = |enc: &mut wgpu::CommandEncoder, from: usize, to: usize| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("forward"),
            timestamp_writes: None,
        });
        for (i, step) in steps.iter().enumerate().take(to).skip(from) {
            pass.set_pipeline(&gpu.kernel(step.kernel).pipeline);
            pass.set_bind_group(0, step.bind, &[(i as u64 * SLOT) as u32]);
            pass.dispatch_workgroups(step.grid[0], step.grid[1], step.grid[2]);
        }
    };
    let mut enc = encoder();
    let mut kernels: Vec<(&'static str, usize, f64)> = Vec::new();
    match profile {
        None => record(&mut enc, 0, steps.len()),
        Some(now) => {
            gpu.finish().await?;
            for (i, step) in steps.iter().enumerate() {
                let start = now();
                let mut one = encoder();
                record(&mut one, i, i + 1);
                q.submit([one.finish()]);
                gpu.finish().await?;
                let ms = now() - start;
                match kernels.iter_mut().find(|k| k.0 == step.kernel) {
                    Some(k) => (k.1, k.2) = (k.1 + 1, k.2 + ms),
                    None => kernels.push((step.kernel, 1, ms)),
                }
            }
        }
    }
    let read_from = profile.map(|now| now());
    let staging = acts.staging(gpu, read.floats(acts, heads, run.len()));
    let readback = match read {
        Read::Trace => Back::Trace(readback::record(&mut enc, acts, &staging, heads, run.len())),
        Read::Slim {
            heads: asked,
            pool,
            rows,
            width,
        } => Back::Slim(slim::record(
            &mut enc,
            gpu,
            acts,
            &staging,
            heads,
            run.len(),
            asked,
            pool,
            (rows, width, steps.len()),
        )),
    };
    gpu.queue.submit([enc.finish()]);
    if let Some(e) = scope.pop().await {
        return Err(GpuError::Wgpu(e.to_string()));
    }
    let all = gpu.read(&staging, (readback.floats() * 4) as u64).await?;
    if let Some(e) = gpu.take_error() {
        return Err(e);
    }
    Ok(Ran {
        all,
        readback,
        kernels,
        read_from,
    })
}

/// Where one forward's time went, phase by phase (see [`super::GpuEngine::profile`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Whether the forward reused cached rows.
    pub incremental: bool,
    /// Per kernel, in the order first seen: dispatches and milliseconds in all.
    pub kernels: Vec<(&'static str, usize, f64)>,
    /// Copying the Trace's parts into the staging buffer and mapping it (ms).
    pub readback_ms: f64,
    /// Cutting the mapped floats into the Trace (ms).
    pub assemble_ms: f64,
    /// Floats read back.
    pub floats: usize,
}

impl Profile {
    /// The whole forward as profiled (each dispatch waited for on its own, so more than
    /// `forward` takes, which overlaps them).
    pub fn total_ms(&self) -> f64 {
        self.kernels.iter().map(|k| k.2).sum::<f64>() + self.readback_ms + self.assemble_ms
    }
}
