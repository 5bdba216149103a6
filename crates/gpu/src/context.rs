//! The wgpu device, the compiled kernels, and small helpers shared by the engine and tests.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use crate::error::GpuError;
use crate::kernel::Kernel;

/// Size of one uniform params slot; every kernel's params fit, and it meets WebGPU's
/// 256-byte dynamic-offset alignment.
pub const SLOT: u64 = 256;

/// A compiled kernel: its pipeline and bind group layout (binding 0 = params with a dynamic
/// offset, then one storage buffer per `writes` entry).
pub struct Compiled {
    pub name: &'static str,
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub writes: &'static [bool],
}

/// Adapter names of software renderers (lower case), for browsers that report neither
/// `isFallbackAdapter` nor a CPU device type.
const SOFTWARE_NAMES: [&str; 5] = [
    "swiftshader",
    "llvmpipe",
    "lavapipe",
    "software",
    "microsoft basic render",
];

/// Whether an adapter runs on the CPU (renders in software): a CPU device type (what wgpu
/// reports for a fallback adapter) or a known software renderer's name.
pub fn runs_on_cpu(device_type: wgpu::DeviceType, name: &str) -> bool {
    let name = name.to_lowercase();
    device_type == wgpu::DeviceType::Cpu || SOFTWARE_NAMES.iter().any(|s| name.contains(s))
}

/// Device, queue, kernels and error capture.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
    kernels: HashMap<&'static str, Compiled>,
    errors: Arc<Mutex<Option<String>>>,
    lost: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    /// Finds an adapter (WebGPU in the browser, Vulkan/Metal/DX12 natively), creates the
    /// device with the adapter's limits, and compiles every one of `kernels` (the crate's
    /// are `kernels::ALL`).
    pub async fn new(kernels: &[Kernel]) -> Result<Gpu, GpuError> {
        #[cfg(target_arch = "wasm32")]
        if !wgpu::util::is_browser_webgpu_supported().await {
            return Err(GpuError::NoAdapter(
                "this browser exposes no WebGPU adapter".into(),
            ));
        }
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        if cfg!(target_arch = "wasm32") {
            desc.backends = wgpu::Backends::BROWSER_WEBGPU;
        }
        let instance = wgpu::Instance::new(desc);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("attnlab"),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let errors = Arc::new(Mutex::new(None));
        let lost = Arc::new(Mutex::new(None));
        {
            let errors = errors.clone();
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                let mut slot = errors.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert_with(|| e.to_string());
            }));
            let lost = lost.clone();
            device.set_device_lost_callback(move |reason, msg| {
                *lost.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(format!("{reason:?}: {msg}"));
            });
        }
        let mut gpu = Gpu {
            device,
            queue,
            info,
            limits,
            kernels: HashMap::new(),
            errors,
            lost,
        };
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        for k in kernels {
            let built = gpu.build_kernel(k);
            gpu.kernels.insert(k.name, built);
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("compiling the kernels: {e}")));
        }
        Ok(gpu)
    }

    fn build_kernel(&self, k: &Kernel) -> Compiled {
        let (name, writes) = (k.name, k.writes);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(k.source().into()),
            });
        let mut entries = vec![wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: None,
            },
            count: None,
        }];
        for (i, &w) in writes.iter().enumerate() {
            entries.push(wgpu::BindGroupLayoutEntry {
                binding: i as u32 + 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: !w },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            });
        }
        // kernels with the same bindings share one layout, so a bind group made for one
        // (e.g. `linear`) also serves the other (`linear_rows`)
        let shared = self.kernels.values().find(|k| k.writes == writes);
        let layout = match shared {
            Some(k) => k.layout.clone(),
            None => self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(name),
                    entries: &entries,
                }),
        };
        let pl = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(name),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: Some(&pl),
                module: &module,
                entry_point: Some(name),
                compilation_options: Default::default(),
                cache: None,
            });
        Compiled {
            name,
            pipeline,
            layout,
            writes,
        }
    }

    pub fn kernel(&self, name: &str) -> &Compiled {
        &self.kernels[name]
    }

    /// A storage buffer holding `data`.
    pub fn storage_init(&self, label: &str, data: &[u8]) -> wgpu::Buffer {
        // a zero-length binding is invalid: keep at least 16 bytes
        let mut bytes = data.to_vec();
        bytes.resize(bytes.len().max(16), 0);
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            })
    }

    /// A zeroed storage buffer of `floats` f32 values.
    pub fn storage(&self, label: &str, floats: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (floats.max(4) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub fn uniform_slots(&self, label: &str, slots: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: slots as u64 * SLOT,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    pub fn staging(&self, label: &str, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.max(16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Binds `params` (one slot, chosen by dynamic offset) and `buffers` for `kernel`.
    pub fn bind(
        &self,
        kernel: &str,
        params: &wgpu::Buffer,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let k = self.kernel(kernel);
        assert_eq!(buffers.len(), k.writes.len(), "{kernel}: binding count");
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: params,
                offset: 0,
                size: NonZeroU64::new(SLOT),
            }),
        }];
        for (i, b) in buffers.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: b.as_entire_binding(),
            });
        }
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(k.name),
            layout: &k.layout,
            entries: &entries,
        })
    }

    /// An error captured since the last call, or a lost device.
    pub fn take_error(&self) -> Option<GpuError> {
        if let Some(m) = self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Some(GpuError::DeviceLost(m));
        }
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(GpuError::Wgpu)
    }

    /// Maps `staging[0..bytes]` after the submitted work, copies it out as f32, unmaps.
    pub async fn read(&self, staging: &wgpu::Buffer, bytes: u64) -> Result<Vec<f32>, GpuError> {
        let slice = staging.slice(0..bytes.max(4));
        let (tx, rx) = futures_channel::oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wgpu(format!("waiting for the GPU: {e}")))?;
        let mapped = rx
            .await
            .map_err(|_| GpuError::DeviceLost("the readback was abandoned".into()))?;
        mapped.map_err(|e| {
            self.take_error()
                .unwrap_or(GpuError::Wgpu(format!("mapping the readback: {e}")))
        })?;
        let view = slice
            .get_mapped_range()
            .map_err(|e| GpuError::Wgpu(format!("reading the mapped range: {e}")))?;
        let out: Vec<f32> = bytemuck::pod_collect_to_vec(&view[..]);
        drop(view);
        staging.unmap();
        Ok(out)
    }

    /// Whether this adapter runs on the CPU ([`runs_on_cpu`]).
    pub fn runs_on_cpu(&self) -> bool {
        runs_on_cpu(self.info.device_type, &self.info.name)
    }

    /// Waits until the GPU has done everything submitted so far.
    pub async fn finish(&self) -> Result<(), GpuError> {
        let (tx, rx) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wgpu(format!("waiting for the GPU: {e}")))?;
        rx.await
            .map_err(|_| GpuError::DeviceLost("the GPU stopped answering".into()))
    }

    /// Runs one kernel once: `buffers` are the initial contents of its storage bindings;
    /// returns the final contents of every binding it writes. For tests and benchmarks.
    pub async fn run_once(
        &self,
        kernel: &str,
        params: &[u8],
        buffers: &[Vec<u8>],
        groups: [u32; 3],
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let p = self.uniform_slots("params", 1);
        let mut padded = params.to_vec();
        padded.resize(SLOT as usize, 0);
        self.queue.write_buffer(&p, 0, &padded);
        let bufs: Vec<wgpu::Buffer> = buffers
            .iter()
            .map(|b| self.storage_init(kernel, b))
            .collect();
        let refs: Vec<&wgpu::Buffer> = bufs.iter().collect();
        let bg = self.bind(kernel, &p, &refs);
        let k = self.kernel(kernel);
        let written: Vec<usize> = (0..bufs.len()).filter(|&i| k.writes[i]).collect();
        let total: u64 = written.iter().map(|&i| bufs[i].size()).sum();
        let staging = self.staging("run_once", total);
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some(kernel),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel),
                timestamp_writes: None,
            });
            pass.set_pipeline(&k.pipeline);
            pass.set_bind_group(0, &bg, &[0]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        }
        let mut off = 0;
        for &i in &written {
            enc.copy_buffer_to_buffer(&bufs[i], 0, &staging, off, bufs[i].size());
            off += bufs[i].size();
        }
        self.queue.submit([enc.finish()]);
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("{kernel}: {e}")));
        }
        let all = self.read(&staging, total).await?;
        let mut out = Vec::new();
        let mut at = 0;
        for &i in &written {
            let n = bufs[i].size() as usize / 4;
            out.push(all[at..at + n].to_vec());
            at += n;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wgpu::DeviceType;

    #[test]
    fn software_adapters_are_known_by_type_or_by_name() {
        assert!(runs_on_cpu(DeviceType::Cpu, ""));
        assert!(runs_on_cpu(DeviceType::Other, "Google SwiftShader"));
        assert!(runs_on_cpu(
            DeviceType::IntegratedGpu,
            "llvmpipe (LLVM 15.0.6, 256 bits)"
        ));
        assert!(!runs_on_cpu(DeviceType::DiscreteGpu, "NVIDIA H200"));
        assert!(!runs_on_cpu(DeviceType::IntegratedGpu, ""));
    }
}
