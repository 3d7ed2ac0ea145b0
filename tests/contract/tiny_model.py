"""Make the contract tests' tiny random-weight Llama, offline: nothing comes from a model hub.

    python tiny_model.py OUT_DIR

writes a Hugging Face model directory (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json, generation_config.json): a Llama with hidden size 256, 4 layers and a
4096-token BPE vocabulary trained here with `tokenizers` (byte fallback and a `▁` metaspace,
like Llama's own, so llama.cpp's converter takes it as a Llama vocabulary).  The training text
is this Python's own standard library source, so the result is the same on every machine.
Runs in the contract tools venv (torch, transformers, tokenizers); seeded, deterministic.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

VOCAB = 4096
HIDDEN = 256
LAYERS = 4
HEADS = 4
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def corpus():
    lib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(lib.glob("*.py"))[:200]:
        yield path.read_text(encoding="utf-8", errors="ignore")


def train_tokenizer(out: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers

    byte_tokens = [f"<0x{i:02X}>" for i in range(256)]
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                           normalizers.Replace(" ", "▁")])
    tok.pre_tokenizer = None
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<unk>", "<s>", "</s>",
                                                                    *byte_tokens],
                                  limit_alphabet=200, show_progress=False)
    tok.train_from_iterator(corpus(), trainer=trainer)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "LlamaTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
        "unk_token": "<unk>", "add_bos_token": True, "add_eos_token": False,
        "legacy": False, "model_max_length": 2048, "chat_template": CHAT_TEMPLATE,
    }, indent=1))
    (out / "special_tokens_map.json").write_text(json.dumps(
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}, indent=1))


def make_model(out: Path) -> None:
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = dict(architectures=["LlamaForCausalLM"], model_type="llama", vocab_size=VOCAB,
                  hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_hidden_layers=LAYERS,
                  num_attention_heads=HEADS, num_key_value_heads=HEADS,
                  max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=10000.0,
                  hidden_act="silu", bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
                  initializer_range=0.02, torch_dtype="bfloat16")
    model = LlamaForCausalLM(LlamaConfig(**config)).to(torch.bfloat16)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(out / "model.safetensors"), metadata={"format": "pt"})
    # Written by hand, not save_pretrained: keys every transformers release (4.x and 5.x) reads.
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps(
        {"bos_token_id": 1, "eos_token_id": 2, "do_sample": False}, indent=1))


def main(out: str) -> None:
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    train_tokenizer(path)
    make_model(path)
    print(f"tiny model in {path}")


if __name__ == "__main__":
    main(sys.argv[1])
