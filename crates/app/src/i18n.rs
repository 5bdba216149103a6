//! Every string the user sees, in Korean and English. Components ask for a [`Key`] in the
//! current [`Lang`]; numbers are formatted by the caller.

use std::fmt;

/// The interface language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    Ko,
    En,
}

impl Lang {
    /// The language for a BCP 47 tag such as the browser's `navigator.language`: Korean for
    /// `ko…`, English for everything else.
    pub fn from_tag(tag: &str) -> Lang {
        if tag.trim().to_ascii_lowercase().starts_with("ko") {
            Lang::Ko
        } else {
            Lang::En
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Lang::Ko => "ko",
            Lang::En => "en",
        }
    }

    pub fn other(self) -> Lang {
        match self {
            Lang::Ko => Lang::En,
            Lang::En => Lang::Ko,
        }
    }
}

macro_rules! strings {
    ($($key:ident => ($ko:expr, $en:expr),)*) => {
        /// A user-visible string.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Key { $($key,)* }

        impl Key {
            pub const ALL: &'static [Key] = &[$(Key::$key,)*];

            pub fn text(self, lang: Lang) -> &'static str {
                match (self, lang) {
                    $((Key::$key, Lang::Ko) => $ko, (Key::$key, Lang::En) => $en,)*
                }
            }
        }
    };
}

strings! {
    AppTitle => ("어텐션 실험실", "attnlab"),
    Tagline => ("글자를 칠 때마다 작은 트랜스포머가 GPU에서 다시 돌고, 셀프 어텐션이 무엇을 하는지 보여 줍니다.",
                "A small Transformer re-runs on your GPU at every keystroke and shows what self-attention does."),
    LanguageSwitch => ("English", "한국어"),
    LanguageSwitchLabel => ("Switch to English", "한국어로 바꾸기"),
    InputLabel => ("문장을 입력하세요 (입력할 때마다 바로 다시 계산합니다)", "Type a sentence (it is recomputed as you type)"),
    Loading => ("모델을 불러오는 중", "Loading the model"),
    LoadFailed => ("모델을 불러오지 못했습니다", "Could not load the model"),
    BackendGpu => ("WebGPU", "WebGPU"),
    BackendCpu => ("CPU", "CPU"),
    BackendStarting => ("엔진 준비 중", "Starting the engine"),
    SoftwareAdapter => ("소프트웨어 어댑터", "software adapter"),
    GpuAdapter => ("GPU 어댑터", "GPU adapter"),
    CpuBecause => ("WebGPU를 쓸 수 없어 CPU로 계산합니다", "WebGPU is not available; computing on the CPU"),
    GpuFailed => ("GPU 계산이 실패해서 CPU로 바꿨습니다", "The GPU failed; switched to the CPU"),
    Tokens => ("토큰", "Tokens"),
    TokensHelp => ("모델이 보는 그대로의 토큰입니다. 마우스를 올리면 번호가 보입니다.", "The tokens exactly as the model sees them. Hover for their ids."),
    Dropped => ("앞부분이 문맥 길이를 넘어 잘렸습니다", "The start was cut off: it does not fit the context"),
    RowsShown => ("{t}행 중 {a}–{b}행", "rows {a}–{b} of {t}"),
    MapZoom => ("맵 확대", "Map zoom"),
    ZoomIn => ("확대", "Zoom in"),
    ZoomOut => ("축소", "Zoom out"),
    WholeMap => ("전체 맵", "Whole map"),
    ZoomShows => ("{t}×{t} 중 쿼리 {a}–{b}, 키 {c}–{d}", "queries {a}–{b}, keys {c}–{d} of {t} × {t}"),
    Minimap => ("전체 맵의 미니맵: 누르거나 끌면 그곳으로 옮깁니다", "Minimap of the whole map: click or drag to move there"),
    EarlierTokens => ("‹ 앞의 토큰 {n}개", "‹ {n} earlier tokens"),
    LaterTokens => ("뒤의 토큰 {n}개 ›", "{n} later tokens ›"),
    DroppedTokens => ("잘린 토큰", "tokens dropped"),
    AllHeads => ("모든 헤드", "All heads"),
    AllHeadsHelp => ("층 × 헤드. 하나를 누르면 아래에 크게 보입니다.", "Layers × heads. Click one to look at it closely."),
    SlimHeads => ("이 모델에는 글이 길어 모든 헤드의 지도를 페이지에 두지 않습니다. 헤드를 고르면 그 헤드의 지도를 계산합니다.",
                  "For this model the text is too long to keep every head's maps on the page: pick a head and its maps are computed."),
    HeadsPooled => ("이 모델에는 글이 길어 모든 헤드의 지도를 페이지에 두지 않습니다. 칸 하나는 {span}×{span} 위치의 평균입니다(행마다 합 1). 헤드를 고르면 그 헤드의 지도를 계산합니다.",
                    "For this model the text is too long to keep every head's maps on the page: each head is pooled, a cell the mean of {span} × {span} positions (each row still sums to 1). Pick a head and its maps are computed."),
    HeadsSmall => ("이 모델에는 글이 길어 모든 헤드의 지도를 페이지에 두지 않습니다. 작은 지도는 각 헤드의 가중치 그대로입니다. 헤드를 고르면 그 헤드의 지도를 계산합니다.",
                   "For this model the text is too long to keep every head's maps on the page; the small maps are each head's weights as they are. Pick a head and its maps are computed."),
    NeedsEveryHead => ("긴 글에서는 고른 헤드의 지도만 계산합니다. 이 보기는 모든 헤드의 지도가 필요합니다.",
                       "On a text this long only the selected head's maps are computed; this view needs every head's."),
    RolloutInStrip => ("긴 글에서는 지도가 이 헤드의 가중치 그대로입니다. 롤아웃(층마다 헤드를 평균해 층끼리 곱한 값)은 «층을 따라 흐르는 정보» 카드에서 봅니다 (층마다 한 행).",
                       "On a text this long the map shows this head's own weights; the rollout (the heads averaged per layer, the layers multiplied) is in the card «Where the information comes from, layer by layer» (a row per layer)."),
    SlimPrediction => ("고른 토큰 다음의 예측을 계산하는 중… (긴 글에서는 CPU 워커가 자기 실행에서 계산합니다)",
                       "computing the prediction after the picked token… (on a text this long the CPU worker computes it from its own run)"),
    SlimPredictionFailed => ("고른 토큰 다음의 예측을 계산하지 못했습니다", "The prediction after the picked token could not be computed"),
    Layer => ("층", "Layer"),
    Head => ("헤드", "Head"),
    SelectedHead => ("선택한 헤드", "Selected head"),
    SelectedHeadHelp => ("행은 쿼리(보는 토큰), 열은 키(보이는 토큰)입니다. 칸에 마우스를 올리거나 화살표 키로 움직이세요(Page Up/Down은 16행씩, Ctrl+Home/End는 처음과 끝으로). 행 이름을 누르거나 Enter를 누르면 그 쿼리를 고정하고, 다시 누르거나 Esc를 누르면 풉니다. 긴 맵은 + / − 키나 Ctrl+휠, 버튼으로 확대하고, 끌거나 휠을 굴려 옮기며, 0을 누르면 전체 맵으로 돌아갑니다.",
                         "Rows are queries (the token looking), columns are keys (the token looked at). Hover a cell or move with the arrow keys (Page Up/Down: 16 rows, Ctrl+Home/End: the first and last cell). Click a row's label (or press Enter) to pin that query; click again or press Esc to unpin. Zoom a long map with + / −, Ctrl+wheel or the buttons; drag or scroll to move; 0 shows the whole map."),
    Query => ("쿼리", "Query"),
    KeyToken => ("키", "Key"),
    RawScore => ("QKᵀ", "QKᵀ"),
    Scaled => ("÷√d_k", "÷√d_k"),
    Masked => ("마스크 후", "after mask"),
    Weight => ("가중치", "weight"),
    MaskedCell => ("가려짐 (미래 토큰)", "masked (a future token)"),
    Steps => ("어텐션 단계", "Attention step by step"),
    StepsHelp => ("선택한 헤드에서 QKᵀ → ÷√d_k → 마스크 → softmax → ×V 의 실제 값입니다.", "The actual values of QKᵀ → ÷√d_k → mask → softmax → ×V in the selected head."),
    StepScores => ("① QKᵀ", "① QKᵀ"),
    StepScaled => ("② ÷√d_k", "② ÷√d_k"),
    StepMasked => ("③ 마스크", "③ mask"),
    StepSoftmax => ("④ softmax", "④ softmax"),
    StepOutput => ("⑤ × V (출력의 앞 8차원)", "⑤ × V (first 8 output dims)"),
    Compare => ("softmax 비교", "Softmax compared"),
    CompareHelp => ("같은 점수를 스케일 없이, ÷√d_k로, 온도 τ와 함께 softmax에 넣었을 때입니다. 각 행의 엔트로피와 최댓값도 봅니다.",
                    "The same scores through softmax unscaled, scaled by ÷√d_k, and with a temperature τ; each row with its entropy and largest weight."),
    Unscaled => ("스케일 없음", "unscaled"),
    ScaledVariant => ("÷√d_k", "scaled ÷√d_k"),
    WithTemperature => ("÷√d_k, 온도 τ", "scaled, temperature τ"),
    Temperature => ("온도 τ", "temperature τ"),
    Entropy => ("엔트로피", "entropy"),
    MaxWeight => ("최댓값", "max"),
    Row => ("행", "row"),
    ApplyToModel => ("이 방식을 모델 전체에 적용", "Apply this variant to the whole model"),
    ApplyChoice => ("모델에 적용할 방식", "Variant applied to the model"),
    CausalMask => ("인과 마스크 (미래 가리기)", "Causal mask (hide the future)"),
    MeanEntropy => ("평균 엔트로피", "mean entropy"),
    WeightedSum => ("V의 가중합", "Weighted sum of V"),
    WeightedSumHelp => ("쿼리 토큰을 고르세요. 각 키 토큰의 V 벡터에 가중치를 곱해 더한 것이 출력입니다.",
                        "Pick a query token. Its output is each key token's V vector times its weight, summed."),
    Output => ("출력", "output"),
    NextToken => ("다음 토큰", "Next token"),
    NextTokenAfter => ("다음에 올 토큰 (이 토큰 뒤)", "Next token after"),
    Probability => ("확률", "probability"),
    ModelCard => ("모델", "Model"),
    Layers => ("층", "layers"),
    Heads => ("헤드", "heads"),
    Context => ("문맥 길이", "context"),
    Vocab => ("어휘", "vocabulary"),
    Parameters => ("매개변수", "parameters"),
    Backend => ("계산 장치", "backend"),
    ForwardMs => ("순전파", "forward"),
    PaintMs => ("그리기", "paint"),
    Incremental => ("증분 계산", "incremental"),
    Full => ("전체 계산", "full"),
    Embedding => ("토큰 + 위치 임베딩", "token + position embedding"),
    EmbeddingScaled => ("토큰 × √d_model + 위치 임베딩", "token × √d_model + position embedding"),
    Attention => ("마스크드 멀티헤드 어텐션", "masked multi-head attention"),
    AddNorm => ("더하기 & LayerNorm", "Add & LayerNorm"),
    Add => ("더하기 (잔차)", "Add (residual)"),
    Ffn => ("피드포워드 (GELU)", "feed-forward (GELU)"),
    FinalNorm => ("마지막 LayerNorm", "final LayerNorm"),
    TokenEmbedding => ("토큰 임베딩 (위치는 RoPE가 q·k에)", "token embedding (positions: RoPE on q and k)"),
    GqaAttention => ("마스크드 그룹 쿼리 어텐션 (RoPE)", "masked grouped-query attention (RoPE)"),
    SwigluFfn => ("피드포워드 (SwiGLU)", "feed-forward (SwiGLU)"),
    FinalRmsNorm => ("마지막 RMSNorm", "final RMSNorm"),
    KvHeads => ("키·값 헤드", "key/value heads"),
    Unembed => ("선형 → softmax → 다음 토큰 확률", "linear → softmax → next-token probabilities"),
    Repeat => ("× N 블록", "× N blocks"),
    Legend => ("범례", "Legend"),
    LegendWeights => ("가중치 0 → 1", "weight 0 → 1"),
    LegendScores => ("점수 음수 ← 0 → 양수", "score negative ← 0 → positive"),
    AblateHead => ("이 헤드 끄기 (출력을 0으로)", "Switch this head off (zero its output)"),
    UrlIgnored => ("링크의 다음 매개변수는 알 수 없거나 잘못되어 무시했습니다", "These link parameters were unknown or malformed and were ignored"),
    ReadsKvHead => ("그룹 쿼리 어텐션: 읽는 키·값 헤드", "grouped-query attention: reads key/value head"),
    SharedBy => ("같이 읽는 쿼리 헤드", "shared by query heads"),
    RopeTitle => ("RoPE: 위치만큼 돌린 q와 k", "RoPE: q and k turned by their positions"),
    RopeHelp => ("차원 쌍마다 q는 위치 i, k는 위치 j만큼의 각도로 돌아갑니다. 내적은 두 각도의 차 (i − j)·θ에만 달려 있습니다. 곱이 큰 쌍부터.",
                 "Each dimension pair of q is turned by an angle for position i, of k for position j; their product depends only on the difference (i − j)·θ. Pairs with the largest product first."),
    RopePair => ("차원 쌍", "pair"),
    RopeFreq => ("θ (회전/토큰)", "θ (rad/token)"),
    RopeAngle => ("각도", "angle"),
    RopeBefore => ("돌리기 전", "before"),
    RopeAfter => ("돌린 뒤", "after"),
    LessonOpenReal => ("실제 언어 모델에서 같은 것을 보기: 수업의 영어 문장으로 SmolLM2 열기", "See the same on a real language model: open SmolLM2 with the lesson's English sentence"),
    LessonRealHeads => ("SmolLM2-135M에서 이 페이지가 방금 잰 헤드 (무작위 토큰을 두 번 말한 글에서): 직전 토큰 헤드와 귀납(induction) 헤드, 점수 순", "On SmolLM2-135M, the heads this page just measured (on random tokens said twice): previous-token and induction heads, by score"),
    LessonUseSentence => ("수업의 문장 쓰기", "Use the lesson's sentence"),
    MoreHeads => ("헤드 더 (약한 순)", "more heads (weaker)"),
    StepQBefore => ("⓪ q, RoPE 전", "⓪ q before RoPE"),
    StepQAfter => ("⓪ q, RoPE 후 (QKᵀ가 읽는 것)", "⓪ q after RoPE (what QKᵀ reads)"),
    StepKBefore => ("⓪ k, RoPE 전", "⓪ k before RoPE"),
    StepKAfter => ("⓪ k, RoPE 후", "⓪ k after RoPE"),
    DrillTitle => ("칸 분해", "Cell taken apart"),
    Dimension => ("차원", "dim"),
    MoreDims => ("개 차원 더 (합에 포함)", "more dimensions (in the sum)"),
    ExpShifted => ("exp((x − 행 최댓값) ÷ τ)", "exp((x − row max) ÷ τ)"),
    RowSum => ("행의 합 Σ exp", "row sum Σ exp"),
    EmptyInput => ("문장을 입력하면 바로 계산합니다.", "Type something and it is computed at once."),
    Computing => ("계산 중…", "computing…"),
    LayersDone => ("계산 중: {layers}개 층 중 {done}개 끝남", "computing: {done} of {layers} layers done"),
    Export => ("내보내기", "Export"),
    ExportHelp => ("파일은 브라우저 안에서 만들어져 저장됩니다", "Files are made in the browser and saved; nothing is uploaded"),
    ExportPng => ("히트맵 PNG", "Heatmap PNG"),
    ExportSvg => ("히트맵 SVG", "Heatmap SVG"),
    ExportCsv => ("헤드 CSV", "Head CSV"),
    ExportJson => ("헤드 JSON", "Head JSON"),
    ExportGrid => ("모든 헤드 PNG", "All heads PNG"),
    ExportTrace => ("전체 Trace JSON", "Whole trace JSON"),
    Exported => ("저장함", "Saved"),
    ExportFailed => ("내보내지 못했습니다", "Could not export"),
    OwnModel => ("모델 고르기 · 내 모델 불러오기", "Choose a model, or load your own"),
    OwnModelHelp => ("GGUF 파일 하나(Llama 계열), 또는 config.json, model.safetensors(나뉜 모델은 model.safetensors.index.json과 그 조각들), tokenizer.json(GPT-2, Llama, Mistral, Qwen2)을 끌어다 놓거나 고르세요. 먼저 검사하고, 문제가 있으면 지금 모델을 그대로 둡니다. 파일은 브라우저 밖으로 나가지 않습니다.",
                     "Drop or pick one GGUF file (Llama family), or config.json, model.safetensors (a sharded model: model.safetensors.index.json and its shards) and tokenizer.json (GPT-2, Llama, Mistral, Qwen2). They are checked first; on any problem the current model stays. The files never leave the browser."),
    HubId => ("Hugging Face 모델 ID", "Hugging Face model id"),
    HubOpen => ("열기", "Open"),
    HubFrom => ("가져올 곳:", "from"),
    ModelMenu => ("모델 고르기", "Choose the model"),
    TeachingModel => ("attnlab 교육용 모델 (내장)", "attnlab teaching model (bundled)"),
    Downloading => ("내려받는 중", "Downloading"),
    PickFiles => ("파일 고르기", "Pick files"),
    PickFolder => ("폴더 고르기", "Pick a folder"),
    DropHere => ("여기에 파일이나 폴더를 놓으세요", "Drop files or a folder here"),
    Reading => ("읽는 중", "Reading"),
    Checking => ("검사 중", "Checking"),
    Keeping => ("이 기기에 보관하는 중", "Keeping it on this device"),
    OwnModelFailed => ("이 모델을 쓸 수 없습니다 (지금 모델을 그대로 씁니다)", "This model cannot be used (the current model stays)"),
    OwnModelLoaded => ("불러온 모델", "Loaded model"),
    MissingFiles => ("필요한 파일이 없습니다", "Missing files"),
    FilesGiven => ("받은 파일", "files given"),
    BundledModel => ("기본 모델", "bundled model"),
    DeltaHelp => ("Δ: 바꾸지 않은 모델과 비교한 확률 차이 (%p)", "Δ: change in probability against the unmodified model (points)"),
    SlimNoDelta => ("Δ 없음: 긴 글에서는 바꾸지 않은 모델이 마지막 토큰 뒤의 예측만 계산합니다", "No Δ here: on a long text the unmodified model predicts after the last token only"),
    UnmodifiedTop => ("바꾸지 않은 모델의 1위", "unmodified model's top"),
    TableView => ("표로 보기 (화면 읽기 프로그램용)", "Show as a table (for screen readers)"),
    TableCaption => ("어텐션 가중치: 행은 쿼리, 열은 키", "Attention weights: rows are queries, columns are keys"),
    LessonPreset => ("예문 넣기", "Use the example"),
    LessonHeads => ("헤드", "heads"),
    LessonPerHead => ("(헤드마다)", "(per head)"),
    LessonToken => ("토큰", "token"),
    LessonDims => ("차원", "dims"),
    LessonScores => ("점수", "scores"),
    LessonNotANumber => ("숫자가 아닙니다", "not a number"),
    LessonVarianceTitle => ("무작위 q, k (성분 분산 1)로 본 q·k의 분산, 2000번", "Variance of q·k for random q, k (unit-variance components), 2000 draws"),
    LessonResample => ("다시 뽑기", "Draw again"),
    LessonThisModel => ("이 모델", "this model"),
    LessonScoreX => ("점수 x", "score x"),
    LessonWeight => ("가중치", "weight"),
    LessonRounded => ("반올림", "rounded"),
    LessonModelRow => ("이 모델의 행", "this model's row"),
    LessonWeights => ("가중치", "weights"),
    LessonNewRepr => ("새 표현", "new "),
    LessonThenFinal => ("마지막에", "then a final"),
    LessonPostLn => ("post-LN (수업과 같은 구조)", "post-LN (as in the lesson)"),
    LessonPreLn => ("pre-LN (GPT-2 구조)", "pre-LN (GPT-2's layout)"),
    LessonOfNine => ("단계", "of 9"),
    LessonTitle => ("수업", "Lesson"),
    LessonClose => ("수업 닫기", "Close the lesson"),
    LessonSections => ("수업 단계", "Lesson sections"),
    LessonShowPanel => ("해당 패널 보기 ↓", "Show the panel ↓"),
    LessonPrev => ("← 이전", "← Back"),
    LessonNext => ("다음 →", "Next →"),
    SelfAttention => ("셀프 어텐션", "self-attention"),
    RnnCaption => ("RNN: 첫 토큰에서 마지막 토큰까지 {steps}단계를 차례로 · 셀프 어텐션: 한 단계에 {pairs}쌍을 모두", "RNN: {steps} steps, one after another, from the first token to the last · self-attention: all {pairs} pairs in one step"),
    CpuThisTime => ("이 결과는 CPU로 계산했습니다", "This result was computed on the CPU"),
    LessonMode => ("수업 모드", "Lesson mode"),
    ManyTokens => ("토큰이 많아 숫자 대신 색으로 보여 줍니다.", "Many tokens: shown as colour instead of numbers."),
    BackendChoice => ("계산 장치", "Backend"),
    BackendAuto => ("자동", "Auto"),
    BackendComparing => ("자동: CPU와 소프트웨어 GPU의 속도를 비교하는 중", "Auto: comparing the CPU with the software GPU"),
    CpuFaster => ("이 기기에선 소프트웨어 GPU보다 빠름", "faster here than the software GPU"),
    Versus => ("대", "vs"),
    CpuChosen => ("CPU를 골랐습니다 (WebGPU는 위의 선택에서 바꿀 수 있습니다)", "CPU chosen (switch to WebGPU above)"),
    CpuOnlyModel => ("WebGPU 엔진이 이 모델은 아직 돌리지 못합니다. CPU 작업자가 계산합니다", "The WebGPU engine does not run this model yet; the CPU worker computes it"),
    NoWebGpuHere => ("이 브라우저에서는 WebGPU를 쓸 수 없습니다", "WebGPU is not available in this browser"),
    WorkerRestarted => ("CPU 작업자가 멈춰서 새로 시작하고 다시 계산했습니다", "The CPU worker stopped; it was restarted and the result computed again"),
    GpuStarting => ("WebGPU 엔진이 아직 준비 중이라 그동안 CPU 작업자가 계산합니다", "The WebGPU engine is still starting; the CPU worker computes meanwhile"),
    SoftwareGpuSlow => ("소프트웨어 GPU에서는 이 크기의 모델이 CPU 작업자보다 훨씬 느려서 CPU가 계산합니다. 엔진 메뉴에서 WebGPU를 고를 수 있습니다", "On a software GPU a model this size runs far slower than on the CPU worker, so the CPU computes it; WebGPU can still be chosen in the engine menu"),
    SoftwareGpuNote => ("소프트웨어 GPU (그래픽 드라이버 없이 CPU가 흉내 냄)", "software GPU (the CPU emulating one, no graphics driver)"),
    Timings => ("시간", "Timings"),
    RolePrevious => ("이전 토큰", "previous-token"),
    RoleFirst => ("첫 토큰 (싱크)", "first-token (sink)"),
    RoleSelf => ("자기 자신", "self"),
    RoleBroad => ("넓게 봄", "broad"),
    RoleLocal => ("가까운 토큰", "local"),
    RoleInduction => ("유도 (induction)", "induction"),
    RoleDuplicate => ("같은 토큰", "duplicate-token"),
    BadgePrevious => ("이전", "prev"),
    BadgeFirst => ("첫", "first"),
    BadgeSelf => ("자기", "self"),
    BadgeBroad => ("넓음", "broad"),
    BadgeLocal => ("근처", "local"),
    BadgeInduction => ("유도", "ind"),
    BadgeDuplicate => ("같은", "dup"),
    RulePrevious => ("바로 앞 키(i−1)에 준 가중치의 평균", "mean weight on the key just before the query (i−1)"),
    RuleFirst => ("첫 키(0번)에 준 가중치의 평균", "mean weight on the first key (0)"),
    RuleSelf => ("자기 자신(i)에 준 가중치의 평균", "mean weight on the query's own key (i)"),
    RuleBroad => ("행 엔트로피 ÷ ln(볼 수 있는 키 수): 고르게 볼수록 1", "row entropy ÷ ln(keys the row sees): 1 for a uniform row"),
    RuleLocal => ("자기와 앞의 3개 키(i−3…i)에 준 가중치 합의 평균", "mean weight within the query and the 3 keys before it (i−3…i)"),
    RuleInduction => ("반복된 무작위 토큰에서, 앞서 나온 같은 토큰의 다음 토큰에 준 가중치", "on repeated random tokens: weight on the token after the query's earlier occurrence"),
    RuleDuplicate => ("반복된 무작위 토큰에서, 앞서 나온 같은 토큰에 준 가중치", "on repeated random tokens: weight on the query's earlier occurrence"),
    HeadRoles => ("헤드 역할", "Head roles"),
    HeadRolesHelp => ("각 헤드가 무엇을 하는지 0–1 점수로: 위 다섯은 지금 문장에서, 유도·같은 토큰은 모델을 불러올 때 돌린 탐침(무작위 토큰을 두 번 반복)에서 잽니다. 점수가 기준을 넘는 역할 중 가장 뚜렷한 것이 그 헤드의 역할입니다. 열 제목을 누르면 정렬합니다.",
                      "What each head does, as scores from 0 to 1: the first five from the current text, induction and duplicate-token from the probe run when the model loaded (random tokens, repeated twice). A head's role is the clearest of the roles whose score reaches its threshold. Click a column title to sort."),
    RoleColumn => ("역할", "role"),
    RoleFilter => ("강조", "Show"),
    RoleFilterAll => ("모든 헤드", "all heads"),
    RoleFilterHeads => ("헤드만", "heads only"),
    ProbeRunning => ("탐침을 돌리는 중…", "running the probe…"),
    ProbeFailed => ("탐침을 돌리지 못했습니다", "The probe did not run"),
    ProbeAbout => ("탐침: 무작위 토큰 {n}개 × 2번, 시드 {seed}, 수정하지 않은 모델", "Probe: {n} random tokens × 2, seed {seed}, the unmodified model"),
    Threshold => ("기준", "threshold"),
    NoRole => ("뚜렷한 역할 없음", "no clear role"),
    RolesShowAll => ("헤드 {n}개 모두 보기", "Show all {n} heads"),
    RolesShowFirst => ("앞의 {n}개만 보기", "Show the first {n} only"),
    RolesShownOf => ("헤드 {total}개 중 {n}개 (정렬 순서대로)", "{n} of {total} heads (in the order sorted)"),
    Pinned => ("고정됨", "pinned"),
    AppendToken => ("문장 끝에 붙이기", "Append to the text"),
    FlowShows => ("지도에 보이는 것", "The map shows"),
    FlowRaw => ("어텐션 가중치", "attention weights"),
    FlowValue => ("값 크기를 곱한 가중치", "value-weighted"),
    FlowRollout => ("롤아웃 (근사)", "rollout (approximate)"),
    FlowValueNote => ("가중치 × ‖v_j‖를 행마다 다시 합이 1이 되게 나눈 값 (Kobayashi 외 2020): 값 벡터가 긴 키일수록 크게 보입니다.", "weight × ‖v_j‖, each row rescaled to sum to 1 (Kobayashi et al. 2020): keys with longer value vectors count more."),
    FlowRolloutNote => ("롤아웃은 근사입니다: 층마다 헤드를 평균하고 잔차 연결을 ½·A + ½·I로 더해 첫 층부터 곱한 값으로, FFN과 LayerNorm은 무시합니다 (Abnar & Zuidema 2020).", "Rollout is an approximation: per layer the heads are averaged, the residual added as ½·A + ½·I, and the layers multiplied from the first; it ignores the FFNs and LayerNorms (Abnar & Zuidema 2020)."),
    FlowComputing => ("긴 글의 흐름을 모든 헤드에서 계산하는 중…", "computing the flow over every head of the long text…"),
    FlowFailed => ("어텐션 흐름을 계산하지 못했습니다", "The attention flow could not be computed"),
    FlowTitle => ("층을 따라 흐르는 정보", "Where the information comes from, layer by layer"),
    FlowStripRaw => ("층마다 헤드를 평균한 어텐션: 각 입력 토큰이 이 쿼리에 주는 몫 —", "Attention with each layer's heads averaged: how much each input token gives the query"),
    FlowStripValue => ("층마다 헤드를 평균한 값 가중 어텐션: 각 입력 토큰이 이 쿼리에 주는 몫 —", "Value-weighted attention, each layer's heads averaged: how much each input token gives the query"),
    FlowStripRollout => ("롤아웃: 그 층까지 쌓였을 때 각 입력 토큰이 이 쿼리에 닿는 몫 —", "Rollout: how much each input token reaches the query up to each layer"),
    ClearestFor => ("'{q}'에서 가장 뚜렷한 헤드", "the clearest for '{q}'"),
    ClearestHead => ("가장 뚜렷함", "the clearest"),
    PickedHead => ("직접 고른 헤드", "picked by you"),
    OtherHead => ("다른 헤드 보기", "See another head"),
    ShowThisHead => ("이 헤드 보기", "Show this head"),
    PatternFound => ("수업의 패턴: '마셨다'에서 낱말 '커피를'을 가장 많이 보는 헤드가 {n}개 있습니다 (가장 강한 것: {head}, {w}). 낱말 하나가 토큰 여럿으로 나뉘면 그 토큰들의 가중치를 더합니다.", "The lesson's pattern: {n} head(s) look from '마셨다' (drank) most at the word '커피를' (the coffee); the strongest: {head}, {w}. When a word is split into several tokens, their weights are added."),
    PatternMissing => ("이 작은 모델에서는 어떤 헤드도 '마셨다'에서 낱말 '커피를'을 가장 많이 보지 않습니다. '커피를'에 준 가장 큰 가중치는 {head}의 {w}입니다. 낱말 하나가 토큰 여럿으로 나뉘면 그 토큰들의 가중치를 더합니다.", "In this small model no head looks from '마셨다' (drank) most at the word '커피를' (the coffee). The largest weight on '커피를' is {w}, in {head}. When a word is split into several tokens, their weights are added."),
    CompareToggle => ("두 문장 비교", "Compare two texts"),
    CompareTexts => ("두 문장 비교", "Two texts compared"),
    CompareTextsHelp => ("같은 헤드에서 A(위 입력)와 B(아래 입력)의 어텐션을 나란히 봅니다. 토큰 수가 같으면 차이(B − A)와 각 쿼리 행이 얼마나 바뀌었는지도 보여 줍니다.",
                         "A (the text above) and B (the text below) on the same head, side by side. Where both have as many tokens: the difference B − A and how much each query row changed."),
    SecondText => ("두 번째 문장 (B)", "Second text (B)"),
    DifferenceMap => ("차이 B − A (주황: B에서 더 큼, 보라: A에서 더 큼)", "Difference B − A (orange: more in B, purple: more in A)"),
    RowChange => ("행의 변화", "row change"),
    RowChangeHelp => ("½·Σ|B − A|: 0이면 같은 가중치, 1이면 완전히 다른 키를 봄", "½·Σ|B − A|: 0 = the same weights, 1 = entirely different keys"),
    MostChangedKey => ("가장 바뀐 키", "key that changed most"),
    TokenCountsDiffer => ("토큰 수가 달라서(A {a}개, B {b}개) 차이 지도는 없습니다.", "The token counts differ (A {a}, B {b}): no difference map."),
    ExportPreparing => ("전체 Trace를 준비하는 중…", "preparing the whole Trace…"),
    LensTitle => ("로짓 렌즈: 층마다 예측이 만들어지는 과정", "Logit lens: how the prediction forms, layer by layer"),
    LensHelp => ("토큰 «{tok}» 뒤의 잔차 흐름을, 임베딩 뒤와 블록마다, 모델 자신의 출력층에 통과시켜 다음 토큰 확률로 봅니다. 토큰을 누르면 그 토큰의 확률을 층마다 따라갑니다.",
                 "The residual stream after «{tok}», after the embedding and after each block, put through the model's own output head as next-token probabilities. Click a token to follow its probability through the layers."),
    LensPostLn => ("Post-LN 모델: 블록의 출력은 이미 LayerNorm을 거쳤으므로 그대로 출력층에 넣습니다. 임베딩 단계만 정규화되지 않은 값입니다.",
                   "Post-LN model: a block's output has already been through a LayerNorm, so it goes to the output head as it is; only the embedding stage is not normalised."),
    LensPreLn => ("모든 단계를 마지막 LayerNorm(ln_f)에 통과시킨 뒤 출력층에 넣습니다: 모델 자신의 마지막 단계와 같습니다.",
                  "Every stage goes through the final LayerNorm (ln_f), then the output head, as the model's own last stage does."),
    LensRmsNorm => ("모든 단계를 마지막 RMSNorm에 통과시킨 뒤 출력층에 넣습니다: 모델 자신의 마지막 단계와 같습니다.",
                    "Every stage goes through the final RMSNorm, then the output head, as the model's own last stage does."),
    LensStage => ("단계", "stage"),
    LensEmbedding => ("임베딩", "embedding"),
    LensAfterBlock => ("블록 {l} 뒤", "after block {l}"),
    LensFinal => ("최종 예측 «{tok}»", "final prediction «{tok}»"),
    LensRank => ("순위", "rank"),
    LensTop => ("가장 가능성 높은 토큰", "most likely tokens"),
    LensFollowing => ("따라가는 토큰 «{tok}»", "following «{tok}»"),
    LensFollow => ("이 토큰의 확률을 층마다 따라가기", "follow this token through the layers"),
    LensUnfollow => ("그만 따라가기", "stop following"),
    LensComputing => ("로짓 렌즈를 계산하는 중…", "computing the logit lens…"),
    LensFailed => ("로짓 렌즈를 계산하지 못했습니다", "The logit lens could not be computed"),
    LensLessonLink => ("쌓인 블록들이 문장을 예측으로 바꾸는 과정: 로짓 렌즈에서 층마다 보기 →", "This is how the stacked blocks turn the sentence into a prediction: see it layer by layer in the logit lens →"),
    ThemeChoice => ("화면 색", "Colour theme"),
    ThemeAuto => ("시스템 설정", "system"),
    ThemeLight => ("밝게", "light"),
    ThemeDark => ("어둡게", "dark"),
    Present => ("발표", "Present"),
    PresentHelp => ("한 가지 보기를 전체 화면에 크게 보여 줍니다 (F 키). Esc로 돌아갑니다.",
                    "Shows one view full-screen with large type (F key). Esc goes back."),
    PresentView => ("보여 줄 것", "View"),
    PresentExit => ("발표 끝내기 (Esc)", "Stop presenting (Esc)"),
    PresentPrev => ("← 이전 절", "← previous section"),
    PresentNext => ("다음 절 →", "next section →"),
    OpenInAttnlab => ("attnlab에서 열기 ↗", "open in attnlab ↗"),
    KeepModel => ("다음에 여는 모델을 이 기기에 보관 — 메뉴, 허브, 내 파일 어느 쪽이든 (다시 내려받거나 파일을 고르지 않고, 오프라인에서도 쓸 수 있게)",
                  "Keep the model I open next on this device — from the menu, the Hub or my files (to use it again offline, without downloading or picking it)"),
    KeptModel => ("이 기기에 보관된 모델", "Kept on this device"),
    LoadKept => ("불러오기", "Load it"),
    ForgetKept => ("지우기", "Forget it"),
    KeepFailed => ("모델을 이 기기에 보관하지 못했습니다", "The model could not be kept on this device"),
    OfflineReady => ("✓ 오프라인", "✓ offline"),
    OfflineReadyHelp => ("이 브라우저에 attnlab과 모델이 저장되어 있어 네트워크 없이도 열립니다.",
                         "attnlab and its model are stored in this browser: it opens without the network."),
    GenTitle => ("이어서 생성하기", "Generate"),
    GenHelp => ("다음 토큰을 하나씩 골라 문장 끝에 붙입니다. 출력 온도 T는 마지막 로짓에 적용됩니다: 어텐션 온도 τ와는 다른 것입니다. 같은 시드와 설정이면 언제나 같은 결과입니다. 페이지에 보이는 그대로의 모델(켜 둔 개입 포함)로 돌립니다 (attnlab generate는 수정하지 않은 모델).",
                "Appends next tokens one by one. The output temperature T applies to the final logits: it is not the attention temperature τ. The same seed and settings always give the same tokens. It runs the model as the page shows it, with any intervention on (attnlab generate runs the unmodified model)."),
    GenSteps => ("토큰 수 (1–64)", "tokens (1–64)"),
    GenGreedy => ("탐욕적 (언제나 가장 가능성 높은 토큰)", "greedy (always the most likely token)"),
    GenTemperature => ("출력 온도 T", "output temperature T"),
    GenTopK => ("top-k (비우면 제한 없음)", "top-k (empty: no limit)"),
    GenTopP => ("top-p (비우면 제한 없음)", "top-p (empty: no limit)"),
    GenSeed => ("시드", "seed"),
    GenStart => ("생성", "Generate"),
    GenStop => ("멈추기", "Stop"),
    GenRunning => ("생성 중: {n}/{total}", "generating: {n} of {total}"),
    GenDone => ("토큰 {n}개를 붙였습니다.", "Appended {n} tokens."),
    GenStopped => ("토큰 {n}개 뒤 멈췄습니다.", "Stopped after {n} tokens."),
    GenContext => ("문맥 길이 {ctx} 토큰에 닿아 토큰 {n}개 뒤 멈췄습니다.", "Stopped after {n} tokens: the text reached the context length of {ctx} tokens."),
    GenContextFull => ("문장이 이미 문맥 길이({ctx} 토큰)를 채워 더 붙일 수 없습니다.", "The text already fills the context ({ctx} tokens): nothing more fits."),
    GenTextChanged => ("문장이 바뀌어 토큰 {n}개 뒤 멈췄습니다.", "Stopped after {n} tokens: the text changed."),
    GenBadSteps => ("토큰 수는 1부터 64까지입니다.", "Tokens: a whole number from 1 to 64."),
    GenBadTemperature => ("출력 온도는 0보다 큰 유한한 수여야 합니다.", "The output temperature must be a positive finite number."),
    GenBadTopK => ("top-k는 1 이상의 정수이거나 빈칸입니다.", "top-k: a whole number ≥ 1, or empty."),
    GenBadTopP => ("top-p는 0보다 크고 1 이하인 수이거나 빈칸입니다.", "top-p: a number in (0, 1], or empty."),
    GenBadSeed => ("시드는 0 이상의 정수입니다.", "The seed is a whole number ≥ 0."),
}

/// A head role's name, badge and rule in the interface language.
pub fn role_text(role: attnlab_model::roles::Role) -> (Key, Key, Key) {
    use attnlab_model::roles::Role::*;
    match role {
        Previous => (Key::RolePrevious, Key::BadgePrevious, Key::RulePrevious),
        First => (Key::RoleFirst, Key::BadgeFirst, Key::RuleFirst),
        SelfToken => (Key::RoleSelf, Key::BadgeSelf, Key::RuleSelf),
        Broad => (Key::RoleBroad, Key::BadgeBroad, Key::RuleBroad),
        Local => (Key::RoleLocal, Key::BadgeLocal, Key::RuleLocal),
        Induction => (Key::RoleInduction, Key::BadgeInduction, Key::RuleInduction),
        Duplicate => (Key::RoleDuplicate, Key::BadgeDuplicate, Key::RuleDuplicate),
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_both_languages() {
        for &k in Key::ALL {
            for lang in [Lang::Ko, Lang::En] {
                assert!(!k.text(lang).trim().is_empty(), "{k:?} in {lang}");
            }
        }
    }

    #[test]
    fn korean_strings_are_korean() {
        // keys that are symbols in both languages are fine; prose must differ
        let prose = [
            Key::Tagline,
            Key::InputLabel,
            Key::SelectedHeadHelp,
            Key::CompareHelp,
        ];
        for k in prose {
            assert_ne!(k.text(Lang::Ko), k.text(Lang::En));
            assert!(k.text(Lang::Ko).chars().any(|c| ('가'..='힣').contains(&c)));
        }
    }

    #[test]
    fn browser_language_picks_the_interface_language() {
        assert_eq!(Lang::from_tag("ko-KR"), Lang::Ko);
        assert_eq!(Lang::from_tag("KO"), Lang::Ko);
        assert_eq!(Lang::from_tag("en-US"), Lang::En);
        assert_eq!(Lang::from_tag(""), Lang::En);
        assert_eq!(Lang::Ko.other(), Lang::En);
    }
}
