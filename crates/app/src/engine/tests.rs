use super::*;
use attnlab_model::testing::random_model;
use attnlab_model::{forward, Config, LnPlacement, Model};
use std::collections::VecDeque;

fn model() -> Model {
    let c = Config {
        n_embd: 8,
        n_head: 2,
        n_layer: 1,
        n_positions: 8,
        vocab_size: 10,
        ln_placement: LnPlacement::Post,
        scale_embedding: false,
        ..Config::bundled(10)
    };
    random_model(&c, 7, 0.5)
}

/// A backend that answers from a script: each call takes the next answer (Ok(ms) or an
/// error); a real forward gives the trace. It counts its calls and restarts.
struct Fake {
    model: Model,
    script: RefCell<VecDeque<Result<f64, ComputeError>>>,
    calls: Cell<usize>,
    baselines: Cell<usize>,
    restarts: Cell<usize>,
}

impl Fake {
    fn new(script: impl IntoIterator<Item = Result<f64, ComputeError>>) -> Fake {
        Fake {
            model: model(),
            script: RefCell::new(script.into_iter().collect()),
            calls: Cell::new(0),
            baselines: Cell::new(0),
            restarts: Cell::new(0),
        }
    }

    fn answer(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Computed, ComputeError> {
        let ms = self.script.borrow_mut().pop_front().unwrap_or(Ok(1.0))?;
        let err = |e: attnlab_model::Error| ComputeError::Input(e.to_string());
        let mut trace = forward(&self.model, ids, opts).map_err(err)?;
        if let Some(heads) = slim {
            trace = trace.slim(heads).map_err(err)?;
        }
        Ok(Computed {
            trace: Rc::new(trace),
            incremental: false,
            ms,
            engine_ms: None,
            complete: true,
        })
    }
}

impl Compute for Fake {
    async fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Computed, ComputeError> {
        self.calls.set(self.calls.get() + 1);
        self.answer(ids, opts, slim)
    }
}

impl CpuCompute for Fake {
    async fn baseline(&self, ids: &[u32], slim: Slim<'_>) -> Result<Computed, ComputeError> {
        self.baselines.set(self.baselines.get() + 1);
        self.answer(ids, &AttentionOptions::default(), slim)
    }
    async fn full(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Computed, ComputeError> {
        self.forward(ids, opts, None).await
    }
    async fn lens(&self, of: &LensOf) -> Result<Vec<f32>, ComputeError> {
        self.calls.set(self.calls.get() + 1);
        self.script.borrow_mut().pop_front().unwrap_or(Ok(1.0))?;
        let err = |e: attnlab_model::Error| ComputeError::Input(e.to_string());
        let rows = match of {
            LensOf::Rows(rows) => rows.clone(),
            LensOf::Position {
                ids,
                opts,
                position,
                last,
            } => {
                let (tr, _) = attnlab_model::forward_kept(
                    &self.model,
                    None,
                    ids,
                    opts,
                    attnlab_model::Keep::Streams,
                )
                .map_err(err)?;
                super::position_rows(&tr, *position, *last).map_err(err)?
            }
        };
        attnlab_model::lens::head_probs(&self.model, &rows).map_err(err)
    }
    async fn flow(&self, of: &FlowOf) -> Result<Vec<f32>, ComputeError> {
        let c = self.forward(&of.ids, &of.opts, None).await?;
        attnlab_model::flow::strip(&c.trace, of.query, of.method)
            .map(|rows| rows.concat())
            .map_err(|e| ComputeError::Input(e.to_string()))
    }
    async fn probe(&self, ids: &[u32], half: usize) -> Result<Vec<Scores>, ComputeError> {
        let c = self
            .forward(ids, &AttentionOptions::default(), None)
            .await?;
        Ok(attnlab_model::roles::probe_scores(&*c.trace, half))
    }
    fn restart(&self) {
        self.restarts.set(self.restarts.get() + 1);
    }
}

fn gpu(script: Vec<Result<f64, ComputeError>>, software: bool) -> Result<GpuSide<Fake>, CpuWhy> {
    Ok(GpuSide {
        compute: Fake::new(script),
        adapter: "Test GPU".into(),
        software,
        trial: true,
    })
}

fn run(e: &Engine<Fake, Fake>, ids: &[u32]) -> Result<Reply, String> {
    ready(e.forward(ids, &AttentionOptions::default(), None))
}

#[test]
fn a_hardware_adapter_runs_everything_on_the_gpu() {
    let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::Auto);
    let r = run(&e, &[1, 2, 3]).unwrap();
    assert!(r.ran_on_gpu && r.notes.is_empty());
    assert_eq!(e.cpu().calls.get(), 0);
    assert!(matches!(
        r.backend,
        Backend::Gpu {
            fallback: false,
            ..
        }
    ));
}

#[test]
fn a_gpu_failure_moves_to_the_cpu_for_good_with_a_note() {
    let e = Engine::new(
        gpu(
            vec![Ok(1.0), Err(ComputeError::Lost("device lost".into()))],
            false,
        ),
        Fake::new([]),
        Preference::WebGpu,
    );
    assert!(run(&e, &[1]).unwrap().ran_on_gpu);
    let r = run(&e, &[1, 2]).unwrap();
    assert!(!r.ran_on_gpu);
    assert_eq!(r.notes, vec![Note::GpuFailed("device lost".into())]);
    assert_eq!(
        r.trace.tokens,
        vec![1, 2],
        "the same request, answered by the CPU"
    );
    assert_eq!(
        r.backend,
        Backend::Cpu {
            why: CpuWhy::GpuFailed("device lost".into())
        }
    );
    let r = run(&e, &[1, 2, 3]).unwrap();
    assert!(
        !r.ran_on_gpu && r.notes.is_empty(),
        "no note again, no GPU again"
    );
    assert!(e.gpu().is_none());
}

#[test]
fn a_text_too_long_for_the_gpu_runs_on_the_cpu_that_once() {
    let e = Engine::new(
        gpu(vec![Err(ComputeError::TooLong("129 > 128".into()))], false),
        Fake::new([]),
        Preference::Auto,
    );
    let r = run(&e, &[1, 2]).unwrap();
    assert!(!r.ran_on_gpu);
    assert_eq!(r.notes, vec![Note::TooLong("129 > 128".into())]);
    assert!(matches!(r.backend, Backend::Gpu { .. }), "the GPU stays");
    assert!(run(&e, &[1]).unwrap().ran_on_gpu);
}

#[test]
fn a_crashed_worker_is_restarted_and_the_request_runs_again() {
    let e = Engine::new(
        Err(CpuWhy::NoWebGpu("no WebGPU".into())),
        Fake::new([Err(ComputeError::Crashed("worker panicked".into()))]),
        Preference::Auto,
    );
    let r = run(&e, &[4, 5]).unwrap();
    assert_eq!(e.cpu().restarts.get(), 1);
    assert_eq!(e.cpu().calls.get(), 2);
    assert_eq!(
        r.notes,
        vec![Note::WorkerRestarted("worker panicked".into())]
    );
    assert_eq!(r.trace.tokens, vec![4, 5]);
    assert_eq!(
        r.backend,
        Backend::Cpu {
            why: CpuWhy::NoWebGpu("no WebGPU".into())
        }
    );
    // a worker that crashes twice in a row is an error, not a loop
    let e = Engine::new(
        Err(CpuWhy::NoWebGpu("no WebGPU".into())),
        Fake::new([
            Err(ComputeError::Crashed("a".into())),
            Err(ComputeError::Crashed("b".into())),
        ]),
        Preference::Cpu,
    );
    assert_eq!(run(&e, &[1]).unwrap_err(), "b");
}

#[test]
fn the_lens_of_a_gpu_trace_runs_on_the_cpu_worker_and_survives_a_crash() {
    let e = Engine::new(
        gpu(vec![], false),
        Fake::new([Err(ComputeError::Crashed("worker panicked".into()))]),
        Preference::WebGpu,
    );
    let r = run(&e, &[1, 2, 3]).unwrap();
    assert!(r.ran_on_gpu);
    let rows = attnlab_model::lens::stage_rows(&r.trace, 2).unwrap();
    let (probs, notes) = ready(e.lens(&LensOf::Rows(rows.clone()))).unwrap();
    let want = attnlab_model::lens::stage_probs(&e.cpu().model, &r.trace, 2).unwrap();
    assert_eq!(probs, want.concat());
    // a slim result's lens: the position, its rows the worker's
    let at = LensOf::Position {
        ids: vec![1, 2, 3],
        opts: AttentionOptions::default(),
        position: 2,
        last: false,
    };
    assert_eq!(ready(e.lens(&at)).unwrap().0, want.concat());
    // its last stage alone: the model's own prediction after that position, as a whole
    // forward gives it
    for position in [1, 2] {
        let at = LensOf::Position {
            ids: vec![1, 2, 3],
            opts: AttentionOptions::default(),
            position,
            last: true,
        };
        let got = ready(e.lens(&at)).unwrap().0;
        let own = r.trace.probs_row(position).unwrap();
        assert_eq!(got.len(), own.len());
        let far = got
            .iter()
            .zip(own)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(far < 1e-6, "position {position}: {far}");
    }
    assert_eq!(notes, vec![Note::WorkerRestarted("worker panicked".into())]);
    assert_eq!(e.cpu().restarts.get(), 1);
    assert_eq!(
        e.gpu().unwrap().compute.calls.get(),
        1,
        "the GPU ran only the forward"
    );
    assert!(ready(e.lens(&LensOf::Rows(rows[1..].to_vec())))
        .unwrap_err()
        .contains("not rows of"));
}

#[test]
fn a_slim_results_flow_runs_on_the_cpu_worker_and_survives_a_crash() {
    use attnlab_model::flow::{self, Method};
    let e = Engine::new(
        gpu(vec![], false),
        Fake::new([Err(ComputeError::Crashed("worker panicked".into()))]),
        Preference::WebGpu,
    );
    let r = run(&e, &[1, 2, 3, 1]).unwrap();
    assert!(r.ran_on_gpu);
    let mut notes = Vec::new();
    for method in Method::ALL {
        let ask = FlowOf {
            ids: vec![1, 2, 3, 1],
            opts: AttentionOptions::default(),
            query: 3,
            method,
        };
        let (rows, said) = ready(e.flow(&ask)).unwrap();
        notes.extend(said);
        assert_eq!(rows, flow::strip(&r.trace, 3, method).unwrap().concat());
    }
    assert_eq!(notes, vec![Note::WorkerRestarted("worker panicked".into())]);
    assert_eq!(e.cpu().restarts.get(), 1);
    assert_eq!(
        e.gpu().unwrap().compute.calls.get(),
        1,
        "the GPU ran only the forward"
    );
    let past = FlowOf {
        ids: vec![1, 2],
        opts: AttentionOptions::default(),
        query: 2,
        method: Method::Raw,
    };
    assert!(ready(e.flow(&past)).unwrap_err().contains("no query 2"));
}

#[test]
fn a_bad_request_is_an_error_without_any_fallback() {
    let e = Engine::new(
        gpu(vec![Err(ComputeError::Input("bad τ".into()))], false),
        Fake::new([]),
        Preference::WebGpu,
    );
    assert_eq!(run(&e, &[1]).unwrap_err(), "bad τ");
    assert!(e.gpu().is_some(), "the GPU is fine");
    assert_eq!(e.cpu().calls.get(), 0);
}

#[test]
fn auto_on_a_software_adapter_measures_both_and_keeps_the_faster() {
    // the GPU takes 180 ms, the CPU 14 ms
    let e = Engine::new(
        gpu(vec![Ok(400.0), Ok(180.0), Ok(170.0)], true),
        Fake::new([Ok(30.0), Ok(14.0), Ok(13.0)]),
        Preference::Auto,
    );
    for i in 0..AUTO_TRIALS {
        let before = e.backend();
        assert!(
            matches!(before, Backend::Comparing { .. }),
            "{i}: {before:?}"
        );
        let r = run(&e, &[1, 2]).unwrap();
        assert!(!r.ran_on_gpu, "the faster result is shown while measuring");
    }
    assert_eq!(e.gpu().unwrap().compute.calls.get(), AUTO_TRIALS);
    assert_eq!(
        e.backend(),
        Backend::Cpu {
            why: CpuWhy::Faster {
                cpu_ms: 14.0,
                gpu_ms: 180.0
            }
        }
    );
    run(&e, &[1, 2, 3]).unwrap();
    assert_eq!(
        e.gpu().unwrap().compute.calls.get(),
        AUTO_TRIALS,
        "then the CPU only"
    );
    // WebGPU stays one click away, and back to Auto keeps the decision
    e.set_preference(Preference::WebGpu);
    assert!(run(&e, &[1]).unwrap().ran_on_gpu);
    e.set_preference(Preference::Auto);
    assert!(!run(&e, &[1]).unwrap().ran_on_gpu);
}

#[test]
fn auto_on_a_software_adapter_skips_the_trial_of_a_model_too_large_for_it() {
    let side = |software| gpu(vec![], software).map(|g| GpuSide { trial: false, ..g });
    let e = Engine::new(side(true), Fake::new([]), Preference::Auto);
    assert_eq!(
        e.backend(),
        Backend::Cpu {
            why: CpuWhy::SoftwareGpuSlow
        }
    );
    assert!(!run(&e, &[1, 2]).unwrap().ran_on_gpu);
    assert_eq!(e.gpu().unwrap().compute.calls.get(), 0, "no trial");
    // WebGPU still runs it when chosen, and a hardware adapter runs it under Auto
    e.set_preference(Preference::WebGpu);
    assert!(run(&e, &[1]).unwrap().ran_on_gpu);
    let hw = Engine::new(side(false), Fake::new([]), Preference::Auto);
    assert!(run(&hw, &[1]).unwrap().ran_on_gpu);
}

#[test]
fn auto_keeps_a_software_gpu_that_is_faster() {
    let e = Engine::new(
        gpu(vec![Ok(5.0), Ok(4.0), Ok(4.0)], true),
        Fake::new([Ok(20.0), Ok(20.0), Ok(20.0)]),
        Preference::Auto,
    );
    for _ in 0..AUTO_TRIALS {
        run(&e, &[1]).unwrap();
    }
    assert!(matches!(e.backend(), Backend::Gpu { fallback: true, .. }));
    assert!(run(&e, &[1]).unwrap().ran_on_gpu);
}

#[test]
fn choosing_the_cpu_never_touches_the_gpu() {
    let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::Cpu);
    assert!(!run(&e, &[1]).unwrap().ran_on_gpu);
    assert_eq!(e.gpu().unwrap().compute.calls.get(), 0);
    assert_eq!(
        e.backend(),
        Backend::Cpu {
            why: CpuWhy::Chosen
        }
    );
}

#[test]
fn an_intervention_brings_the_unmodified_models_trace_from_the_cpu() {
    let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::WebGpu);
    let opts = AttentionOptions {
        ablate: [(0, 1)].into(),
        ..AttentionOptions::default()
    };
    let r = ready(e.forward(&[1, 2], &opts, None)).unwrap();
    assert!(r.ran_on_gpu);
    assert_eq!(r.baseline.unwrap().options, AttentionOptions::default());
    assert_eq!(r.trace.options, opts);
    assert_eq!(e.cpu().baselines.get(), 1);
    assert!(run(&e, &[1]).unwrap().baseline.is_none());
    assert_eq!(e.cpu().baselines.get(), 1);
}

#[test]
fn a_slim_forward_brings_the_heads_asked_and_its_baseline_none() {
    let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::WebGpu);
    let opts = AttentionOptions {
        temperature: 2.0,
        ..AttentionOptions::default()
    };
    let r = ready(e.forward(&[1, 2, 3], &opts, Some(&[(0, 1)]))).unwrap();
    assert!(r.trace.has_head(0, 1) && !r.trace.has_head(0, 0));
    assert_eq!(r.trace.kept(), attnlab_model::Keep::Streams);
    let whole = forward(&e.cpu().model, &[1, 2, 3], &opts).unwrap();
    assert_eq!(r.trace.head(0, 1).weights, whole.head(0, 1).weights);
    let base = r.baseline.unwrap();
    assert!(base.heads.is_empty() && base.kept() == attnlab_model::Keep::Streams);
    assert_eq!(base.options, AttentionOptions::default());
}

#[test]
fn preferences_round_trip_through_their_codes() {
    for p in Preference::ALL {
        assert_eq!(Preference::from_code(p.code()), Some(p));
    }
    assert_eq!(Preference::from_code("gpu"), None);
}

/// The probe's scores cross from the worker as two numbers a head, an undefined one as NaN,
/// and come back as they were.
#[test]
fn probe_scores_cross_the_wire_as_they_are() {
    use attnlab_model::roles::Role;
    let mut a = Scores::default();
    a.set(Role::Induction, Some(0.9));
    let mut b = Scores::default();
    b.set(Role::Induction, Some(0.0));
    b.set(Role::Duplicate, Some(0.25));
    let wire = protocol::probe_scores_to_wire(&[a, b]);
    assert_eq!(wire.len(), 4);
    assert!(wire[1].is_nan());
    assert_eq!(protocol::probe_scores_from_wire(&wire), vec![a, b]);
}
