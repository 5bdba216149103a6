//! A kernel launch as a value. A kernel module's `bind` makes a [`Bound`] (its bind group,
//! with the length of every buffer in it) from named buffers, once at set-up; its `step`
//! checks a forward's shapes against those lengths and returns a [`Step`] — kernel, bind
//! group, params, grid — with the grid computed from the module's `WG`, the workgroup size
//! its WGSL is compiled with (kernels.rs). The engine's plan is a list of steps.

use bytemuck::Pod;

use crate::context::{Gpu, SLOT};
use crate::error::GpuError;

/// A kernel's bind group and the length, in 4-byte elements, of each storage buffer in it
/// (binding 1, 2, …).
pub struct Bound {
    pub kernel: &'static str,
    pub group: wgpu::BindGroup,
    pub lens: Vec<usize>,
}

impl Bound {
    /// Binds `params` (one slot, by dynamic offset) and `buffers` for `kernel`.
    pub fn new(
        gpu: &Gpu,
        kernel: &'static str,
        params: &wgpu::Buffer,
        buffers: &[&wgpu::Buffer],
    ) -> Bound {
        Bound {
            kernel,
            group: gpu.bind(kernel, params, buffers),
            lens: buffers.iter().map(|b| (b.size() / 4) as usize).collect(),
        }
    }

    /// Checks that storage binding `i` (`what`, for the message) holds at least `need`
    /// elements.
    pub fn need(&self, i: usize, what: &str, need: usize) -> Result<(), GpuError> {
        let have = self.lens.get(i).copied().unwrap_or(0);
        if need > have {
            return Err(GpuError::Shape(format!(
                "{}: {what} needs {need} values, its buffer holds {have}",
                self.kernel
            )));
        }
        Ok(())
    }
}

/// One dispatch: which kernel, with which bind group, params and grid.
#[derive(Debug)]
pub struct Step<'a> {
    pub kernel: &'static str,
    pub bind: &'a wgpu::BindGroup,
    /// The params' bytes, padded to one uniform slot.
    pub params: [u8; SLOT as usize],
    pub grid: [u32; 3],
}

impl<'a> Step<'a> {
    pub fn new<P: Pod>(kernel: &'static str, bound: &'a Bound, params: P, grid: [u32; 3]) -> Self {
        let mut bytes = [0u8; SLOT as usize];
        let p = bytemuck::bytes_of(&params);
        bytes[..p.len()].copy_from_slice(p);
        Step {
            kernel,
            bind: &bound.group,
            params: bytes,
            grid,
        }
    }

    /// A grid with no workgroups (an empty region): not dispatched.
    pub fn is_empty(&self) -> bool {
        self.grid.contains(&0)
    }
}

/// Workgroups to cover `items` with `per` in each (`per`: a dimension of a kernel's `WG`).
pub fn groups(items: usize, per: u32) -> u32 {
    items.div_ceil(per as usize) as u32
}

/// The most workgroups WebGPU guarantees along one dimension of a dispatch.
pub const MAX_GROUPS: u32 = 65535;

/// Workgroups to cover `items` counted in one line, `per` to a workgroup, as an (x, y) grid
/// within [`MAX_GROUPS`] per dimension: the kernel's item is `gid.x + gid.y · (grid x · per)`
/// (`num_workgroups.x · WG_X` in WGSL); items past `items` return.
pub fn flat_groups(items: usize, per: u32) -> [u32; 2] {
    let g = groups(items, per);
    if g <= MAX_GROUPS {
        [g, 1]
    } else {
        [MAX_GROUPS, g.div_ceil(MAX_GROUPS)]
    }
}

/// Checks that a row range lies within the `capacity` positions the buffers hold.
pub fn rows_within(
    kernel: &str,
    rows: &std::ops::Range<usize>,
    capacity: usize,
) -> Result<(), GpuError> {
    if rows.start > rows.end || rows.end > capacity {
        return Err(GpuError::Shape(format!(
            "{kernel}: rows {}..{} outside the {capacity} positions the buffers hold",
            rows.start, rows.end
        )));
    }
    Ok(())
}

/// The per-head matrices' shape: `count` heads of `positions` rows each, `dk` wide for q, k,
/// v and head_out, `positions` wide for the score matrices (the row stride is the capacity,
/// so that an incremental forward leaves cached rows in place).
#[derive(Clone, Copy, Debug)]
pub struct Heads {
    pub count: usize,
    pub dk: usize,
    pub positions: usize,
}

impl Heads {
    /// Elements of one (H, P, Dk) buffer.
    pub fn dk_len(&self) -> usize {
        self.count * self.positions * self.dk
    }

    /// Elements of one (H, P, P) buffer.
    pub fn square_len(&self) -> usize {
        self.count * self.positions * self.positions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_grids_stay_within_the_dimension_limit_and_cover_every_item() {
        assert_eq!(flat_groups(0, 64), [0, 1]);
        assert_eq!(flat_groups(64 * 65535, 64), [65535, 1]);
        // one more workgroup: two rows of 65,535 along x
        assert_eq!(flat_groups(64 * 65535 + 1, 64), [65535, 2]);
        let [x, y] = flat_groups(4096 * 4096, 64);
        assert!(x <= MAX_GROUPS && (x as usize) * (y as usize) * 64 >= 4096 * 4096);
    }
}
