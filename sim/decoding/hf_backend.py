"""Optional Hugging Face ``transformers`` backend: a local causal-LM pair behind :class:`LanguageModel`.

Install with ``pip install 'ahasd[hf]'``; nothing else in the project needs it. Models are loaded
from local folders or the local Hugging Face cache only (``local_files_only=True``): the golden
model never downloads. The draft and target must share a tokenizer (same vocabulary), as
speculative sampling compares their distributions token by token.
"""

import numpy as np

from ahasd.spec.params import check_positive

__all__ = ["HFModel", "load_hf_pair", "require_transformers"]


def require_transformers():
    """Import and return ``(torch, transformers)``, or raise ImportError with what to install."""
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError("the Hugging Face backend needs the optional dependencies "
                          "`transformers` and `torch`: pip install 'ahasd[hf]' "
                          f"({e})") from None
    return torch, transformers


class HFModel:
    """A causal language model from ``transformers`` as a :class:`LanguageModel`.

    Parameters
    ----------
    path : str
        A local model folder or a model name already in the local Hugging Face cache.
    device : str
        Torch device (``"cpu"`` by default).
    temperature : float
        Logits are divided by it before the softmax.
    """

    def __init__(self, path, *, device="cpu", temperature=1.0):
        torch, transformers = require_transformers()
        check_positive("temperature", temperature)
        self._torch = torch
        self.device = device
        self.temperature = float(temperature)
        try:
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                path, local_files_only=True).to(device).eval()
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(path,
                                                                        local_files_only=True)
        except OSError as e:   # not a model folder, and not in the local cache
            raise ValueError(f"cannot load a transformers model from {path!r} (local folders "
                             f"and the local Hugging Face cache only): {e}") from None
        self._V = int(self.model.get_output_embeddings().weight.shape[0])
        # Longest sequence the model takes (learned position embeddings index out of range past
        # it); None where the config does not say.
        self.max_positions = getattr(self.model.config, "max_position_embeddings", None)

    @property
    def vocab_size(self):
        return self._V

    def logits(self, ids):
        """Raw logits of the model for every position of ``ids``, a float64 array (n, V)."""
        torch = self._torch
        n = len(ids)
        if self.max_positions is not None and n > self.max_positions:
            raise ValueError(f"a sequence of {n} tokens is longer than the model's context of "
                             f"{self.max_positions} positions: generate fewer tokens or use a "
                             "shorter prompt")
        with torch.no_grad():
            x = torch.tensor([list(ids)], dtype=torch.long, device=self.device)
            return self.model(x).logits[0].double().cpu().numpy()

    def _probs(self, ids):
        # Softmax in numpy float64, so the distributions sum to 1 as tightly as the n-gram's.
        z = np.asarray(self.logits(ids), dtype=np.float64) / self.temperature
        z -= z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    def next_dist(self, context):
        if not len(context):
            raise ValueError("context must hold at least one token for a transformers model")
        return self._probs(context)[-1]

    def score(self, context, continuation):
        # One forward pass over context + continuation gives all k+1 distributions at once.
        k = len(continuation)
        return self._probs(list(context) + list(continuation))[-(k + 1):]


def load_hf_pair(draft_path, target_path, *, device="cpu"):
    """A :class:`ahasd.sim.decoding.ngram.ModelPair` of two local transformers models."""
    from ahasd.sim.decoding.ngram import ModelPair
    draft = HFModel(draft_path, device=device)
    target = HFModel(target_path, device=device)
    if draft.vocab_size != target.vocab_size:
        raise ValueError(f"draft and target vocabularies differ: {draft.vocab_size} != "
                         f"{target.vocab_size}")
    return ModelPair(name=f"hf:{draft_path},{target_path}", tokenizer=target.tokenizer,
                     draft=draft, target=target)
