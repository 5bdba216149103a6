//! Lesson mode's prose, in Korean and English: a title and short paragraphs per section.
//! Our own writing; the structure and the examples follow the Korean self-attention lesson.

use crate::i18n::Lang;
use crate::lesson::Section;

/// (title, paragraphs) of a section.
pub fn text(s: Section, lang: Lang) -> (&'static str, &'static [&'static str]) {
    match (s, lang) {
        (Section::WhyNotRnn, Lang::Ko) => ("왜 RNN이 아닌가", &[
            "RNN은 토큰을 하나씩 차례로 읽습니다. 마지막 토큰이 첫 토큰의 정보를 받으려면 그 사이의 모든 단계를 거쳐야 하고, 앞 단계가 끝나야 다음 단계를 계산할 수 있어 병렬로 돌리기 어렵습니다.",
            "셀프 어텐션은 문장 전체를 한꺼번에 펼쳐 놓고 모든 토큰 쌍의 관련도를 한 번의 행렬 곱으로 계산합니다. 어떤 두 토큰도 한 단계 만에 직접 연결됩니다.",
            "아래 그림은 지금 입력한 문장으로 두 방식을 비교합니다. 오른쪽의 '모든 헤드'가 그 모든 쌍을 실제로 계산한 결과입니다.",
        ]),
        (Section::WhyNotRnn, Lang::En) => ("Why not an RNN", &[
            "An RNN reads tokens one after another. For the last token to hear from the first, the information has to pass through every step in between, and each step waits for the one before it, so the work is hard to parallelise.",
            "Self-attention lays the whole sentence out at once and scores every pair of tokens in one matrix product. Any two tokens are connected directly, in a single step.",
            "The picture below compares both with the sentence you typed. The 'All heads' panel is every one of those pairs, actually computed.",
        ]),
        (Section::Qkv, Lang::Ko) => ("Q, K, V는 X의 세 가지 투영", &[
            "각 토큰의 벡터 x에 학습된 세 행렬을 곱해 세 개의 벡터를 만듭니다. 쿼리 q = x·W_Q는 '나는 무엇을 찾는가', 키 k = x·W_K는 '나는 어떤 정보를 가졌는가', 값 v = x·W_V는 '선택되면 내가 건넬 내용'입니다.",
            "헤드가 여러 개면 d_model 차원을 헤드 수로 나눠 헤드마다 d_k 차원의 q, k, v를 씁니다. 아래는 이 모델의 행렬 크기와, 고른 토큰의 실제 q, k, v입니다.",
        ]),
        (Section::Qkv, Lang::En) => ("Q, K, V: three projections of X", &[
            "Each token's vector x is multiplied by three learned matrices. The query q = x·W_Q says what the token is looking for, the key k = x·W_K what it offers, the value v = x·W_V what it hands over when chosen.",
            "With several heads, d_model is split so each head uses q, k, v of d_k dimensions. Below: this model's matrix shapes and the picked token's actual q, k and v.",
        ]),
        (Section::Scores, Lang::Ko) => ("QKᵀ: 모든 쌍의 관련도", &[
            "쿼리 행렬 Q와 키 행렬 K의 전치를 곱하면 T×T 점수 행렬이 나옵니다. i행 j열은 토큰 i의 쿼리와 토큰 j의 키의 내적, 곧 i가 j를 얼마나 참고하고 싶은지입니다.",
            "이 점수는 단어의 겉모양이 비슷한 정도가 아니라 학습된 관계입니다. 아래는 선택한 헤드의 실제 점수이고, '어텐션 단계' 패널의 ①이 같은 행렬입니다.",
        ]),
        (Section::Scores, Lang::En) => ("QKᵀ: relevance of every pair", &[
            "Multiplying the query matrix Q by the transposed key matrix K gives a T×T score matrix. Row i, column j is the dot product of token i's query with token j's key: how much i wants to consult j.",
            "These scores are learned relations, not surface similarity of words. Below are the selected head's actual scores; step ① of the 'Attention step by step' panel is the same matrix.",
        ]),
        (Section::Scaling, Lang::Ko) => ("왜 √d_k로 나누는가", &[
            "q와 k의 성분이 평균 0, 분산 1이면 내적 q·k의 분산은 d_k입니다. 차원이 크면 점수가 크게 벌어지고, softmax는 가장 큰 점수 하나에 거의 모든 가중치를 몰아 줍니다. 그러면 기울기가 거의 0이 되어 학습이 멈춥니다.",
            "그래서 점수를 √d_k로 나눠 분산을 1로 되돌립니다. 수업의 예: d_k = 64이면 [2, 4, 20, 3]이 [0.25, 0.5, 2.5, 0.375]가 됩니다. 숫자를 바꿔 보세요.",
        ]),
        (Section::Scaling, Lang::En) => ("Why divide by √d_k", &[
            "If the components of q and k have mean 0 and variance 1, the dot product q·k has variance d_k. With many dimensions the scores spread far apart and softmax puts nearly all the weight on the largest one; its gradients vanish and learning stalls.",
            "Dividing the scores by √d_k brings the variance back to 1. The lesson's example: with d_k = 64, [2, 4, 20, 3] becomes [0.25, 0.5, 2.5, 0.375]. Change the numbers and see.",
        ]),
        (Section::Softmax, Lang::Ko) => ("softmax: 점수를 가중치로", &[
            "softmax는 각 점수에 exp를 취하고 그 합으로 나눕니다. 결과는 모두 0과 1 사이이고 한 행의 합은 정확히 1이라, '어디를 얼마나 참고할지'의 비율로 읽을 수 있습니다.",
            "수업의 점수 (1.2, 0.3, 2.1, −0.4)를 넣은 참값은 0.25, 0.10, 0.60, 0.05입니다 (수업 그림의 숫자는 근삿값입니다). 숫자를 바꿔 보세요.",
        ]),
        (Section::Softmax, Lang::En) => ("Softmax: scores into weights", &[
            "Softmax takes exp of each score and divides by their sum. Every result lies between 0 and 1 and a row sums to exactly 1, so it reads as the share of attention each token gets.",
            "The lesson's scores (1.2, 0.3, 2.1, −0.4) give the true values 0.25, 0.10, 0.60, 0.05 (the lesson's diagram shows rounded ones). Change the numbers and see.",
        ]),
        (Section::WeightedSum, Lang::Ko) => ("V의 가중합", &[
            "마지막으로 각 토큰의 값 벡터 v에 가중치를 곱해 더합니다. '마셨다'의 새 표현은 '커피를', '오늘' 같은 토큰의 정보를 그 가중치만큼 섞은 문맥 벡터가 됩니다.",
            "수업의 숫자는 설명용입니다. 아래는 이 작은 모델이 실제로 계산한 '마셨다'의 가중치이고, 'V의 가중합' 패널에서 곱과 합을 하나씩 볼 수 있습니다.",
        ]),
        (Section::WeightedSum, Lang::En) => ("The weighted sum of V", &[
            "Finally each token's value vector v is multiplied by its weight and the results are added. The new representation of '마셨다' (drank) is a context vector that mixes in tokens such as '커피를' (the coffee) and '오늘' (today) by their weights.",
            "The lesson's numbers are illustrative. Below are the weights this small model actually computes for '마셨다'; the 'Weighted sum of V' panel shows each product and the sum.",
        ]),
        (Section::CausalMask, Lang::Ko) => ("인과 마스크", &[
            "다음 토큰을 예측하는 모델은 학습 때 미래 토큰을 보면 안 됩니다. 그래서 점수 행렬의 대각선 위(미래)를 −∞로 바꿔 softmax 후 가중치가 0이 되게 합니다.",
            "마스크를 꺼 보세요. 모든 토큰이 미래를 보게 되고, 이렇게 학습하지 않은 모델의 예측이 바뀝니다. '다음 토큰' 패널의 Δ가 바꾸지 않은 모델과의 차이입니다.",
        ]),
        (Section::CausalMask, Lang::En) => ("The causal mask", &[
            "A model that predicts the next token must not see the future while it learns. The scores above the diagonal (the future) are set to −∞, so their weights after softmax are 0.",
            "Switch the mask off. Every token now sees the future, which this model was never trained on, and its predictions move; the Δ in the 'Next token' panel is the change against the unmodified model.",
        ]),
        (Section::MultiHead, Lang::Ko) => ("멀티헤드", &[
            "헤드 하나는 한 가지 관계만 잘 잡습니다. 멀티헤드 어텐션은 Q, K, V를 h개의 작은 공간으로 나눠 병렬로 계산하고, 결과를 이어 붙여 W_O로 섞습니다.",
            "수업의 문장 \"Which do you like better, coffee or tea?\"에서 어떤 헤드는 문장 유형(Which ↔ ?), 어떤 헤드는 선택지(coffee ↔ tea)를 볼 수 있습니다. 이 작은 모델의 헤드들이 마지막 토큰에서 가장 많이 보는 토큰은 아래와 같습니다.",
        ]),
        (Section::MultiHead, Lang::En) => ("Multi-head", &[
            "One head captures one kind of relation well. Multi-head attention splits Q, K and V into h smaller spaces, computes them in parallel, concatenates the results and mixes them with W_O.",
            "In the lesson's sentence \"Which do you like better, coffee or tea?\" one head may track the sentence type (Which ↔ ?), another the choices (coffee ↔ tea). Below: the token each head of this small model looks at most from the last token.",
        ]),
        (Section::Block, Lang::Ko) => ("블록: 잔차, LayerNorm, FFN", &[
            "어텐션 뒤에는 입력을 그대로 더하는 잔차 연결과 LayerNorm, 그리고 토큰마다 따로 작동하는 피드포워드 신경망(FFN)이 옵니다. 잔차는 층이 깊어져도 원래 정보와 기울기가 흐를 길을 열어 둡니다.",
            "이 블록을 N번 쌓은 뒤 선형 층과 softmax로 다음 토큰의 확률을 냅니다. 아래 식과 '모델' 패널의 그림은 지금 불러온 모델의 구조를 따릅니다.",
        ]),
        (Section::Block, Lang::En) => ("The block: residual, LayerNorm, FFN", &[
            "After attention come a residual connection that adds the input back, LayerNorm, and a feed-forward network (FFN) that works on each token separately. The residual keeps a path open for the original information and the gradients however deep the stack.",
            "The block is stacked N times; a linear layer and softmax then give the next-token probabilities. The formula below and the 'Model' panel's diagram follow the model loaded now.",
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_has_text_in_both_languages() {
        for s in Section::ALL {
            let (ko_t, ko) = text(s, Lang::Ko);
            let (en_t, en) = text(s, Lang::En);
            assert!(!ko.is_empty() && ko.len() == en.len(), "{s:?}");
            assert!(ko_t
                .chars()
                .chain(ko.concat().chars())
                .any(|c| ('가'..='힣').contains(&c)));
            assert_ne!(ko_t, en_t);
        }
    }
}
