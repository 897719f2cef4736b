"""Records Hugging Face BertModel checkpoints and outputs for models/bert's parity tests.

For each config it builds a randomly initialised transformers BertModel
(fixed seed), saves it with save_pretrained (config.json and
model.safetensors), runs it in float32 on a ragged batch (token ids padded
with 0, attention_mask 1 on each sequence's tokens, token_type_ids 0 then 1
over each sequence) and writes the inputs and outputs (last_hidden_state,
pooler_output) to io.safetensors beside the checkpoint. The Go side
(models/bert's TestParity and TestParityLarge) loads both and compares.

    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py tiny models/bert/testdata/tiny
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py mlm models/bert/testdata/mlm
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py cls models/bert/testdata/cls
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py small /tmp/bert/small
    CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py base /tmp/bert/base

tiny (2 layers, 32 wide) is committed for CI, and so are mlm and cls (a
BertForMaskedLM and a 3-class BertForSequenceClassification, 1 layer, 16
wide), whose io.safetensors holds the logits; small (4 layers, 256 wide)
and base (bert-base-uncased's config) are too large to commit.
"""

import os
import sys

# bench/kernels.py would shadow the `kernels` package that transformers imports.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel

CONFIGS = {
    "tiny": dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=64, max_position_embeddings=48, type_vocab_size=2),
    "mlm": dict(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                intermediate_size=24, max_position_embeddings=16, type_vocab_size=2),
    "cls": dict(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                intermediate_size=24, max_position_embeddings=16, type_vocab_size=2,
                id2label={0: "neg", 1: "neutral", 2: "pos"}),
    "small": dict(vocab_size=30522, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                  intermediate_size=1024, max_position_embeddings=512, type_vocab_size=2),
    "base": dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, type_vocab_size=2),
}

# The ragged batch: each config's sequence lengths (the longest sets the padded length).
LENGTHS = {"tiny": [11, 7, 1, 4], "mlm": [9, 3, 6], "cls": [9, 3, 6], "small": [64, 37, 5, 50], "base": [128, 93, 17, 2]}


def main():
    name, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(36)
    cfg = BertConfig(hidden_act="gelu", layer_norm_eps=1e-12, attn_implementation="eager", **CONFIGS[name])
    model = {"mlm": BertForMaskedLM, "cls": BertForSequenceClassification}.get(name, BertModel)(cfg).eval()
    # initializer_range 0.02 leaves biases and LayerNorm at 0/1; give them random
    # values too, so that every parameter's loading is checked.
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("bias") or "LayerNorm" in pname:
                p.add_(torch.randn_like(p) * 0.1)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)

    lengths = LENGTHS[name]
    b, t = len(lengths), max(lengths)
    rng = np.random.default_rng(36)
    ids = np.zeros((b, t), np.int64)
    mask = np.zeros((b, t), np.int64)
    types = np.zeros((b, t), np.int64)
    for i, n in enumerate(lengths):
        ids[i, :n] = rng.integers(1, cfg.vocab_size, n)
        mask[i, :n] = 1
        types[i, n // 2:n] = 1
    with torch.inference_mode():
        o = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                  token_type_ids=torch.from_numpy(types))
    io = {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "token_type_ids": torch.from_numpy(types),
    }
    if name in ("mlm", "cls"):
        io["logits"] = o.logits.contiguous()
    else:
        io["last_hidden_state"] = o.last_hidden_state.contiguous()
        io["pooler_output"] = o.pooler_output.contiguous()
    save_file(io, os.path.join(out, "io.safetensors"))


if __name__ == "__main__":
    main()
