#!/usr/bin/env python3
"""Converts a TensorFlow.js graph model (model.json + .bin shards) to ONNX for OpenCV's dnn module.

Only the operations the face models of @vladmandic/human use are handled (BlazeFace, the
MediaPipe face mesh, the iris model and FaceRes): convolutions (plain, depthwise, fused with a
bias, ReLU or PReLU), additions, ReLU/ReLU6 clips, max pooling, padding, reshapes, sigmoid,
softmax, a global mean and fused matrix products. Anything else stops the conversion with the
name of the operation, so a changed model cannot be converted into a silently wrong one.

The ONNX graph takes NCHW input (what cv::dnn::blobFromImage gives); TensorFlow's NHWC layout is
kept only where a reshape or a flattening needs it (a transpose is inserted there). Padding is
explicit: TensorFlow's SAME padding is asymmetric for even inputs and stride 2 (one more row and
column after than before), so it becomes a Pad node before a VALID convolution where needed.

Needs Debian's python3-onnx and python3-numpy (no PyPI). Usage:
  tfjs_to_onnx.py model.json out.onnx
"""
import base64
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DTYPES = {"float32": np.float32, "int32": np.int32, "float16": np.float16, "uint8": np.uint8,
          "uint16": np.uint16, "bool": np.bool_}


def load_weights(model_dir, manifest):
    """Reads every weight of the manifest: {name: numpy array}, dequantized to float32."""
    out = {}
    for group in manifest:
        data = b"".join(open(os.path.join(model_dir, p), "rb").read() for p in group["paths"])
        off = 0
        for w in group["weights"]:
            shape = w["shape"]
            count = int(np.prod(shape)) if shape else 1
            q = w.get("quantization")
            if q:
                qd = DTYPES[q["dtype"]]
                raw = np.frombuffer(data, dtype=qd, count=count, offset=off)
                off += count * np.dtype(qd).itemsize
                if q["dtype"] == "float16":
                    arr = raw.astype(np.float32)
                elif "scale" in q:
                    arr = raw.astype(np.float32) * q["scale"] + q.get("min", 0.0)
                else:
                    raise SystemExit("unsupported quantization %r for %s" % (q, w["name"]))
            else:
                dt = DTYPES[w["dtype"]]
                arr = np.frombuffer(data, dtype=dt, count=count, offset=off).copy()
                off += count * np.dtype(dt).itemsize
            out[w["name"]] = arr.reshape(shape)
        if off != len(data):
            raise SystemExit("weights: read %d of %d bytes of %s" % (off, len(data), group["paths"]))
    return out


def attr_list(node, key):
    return [int(i) for i in node.get("attr", {}).get(key, {}).get("list", {}).get("i", [])]


def attr_str(node, key):
    s = node.get("attr", {}).get(key, {}).get("s")
    return base64.b64decode(s).decode() if s else None


def attr_strs(node, key):
    return [base64.b64decode(s).decode() for s in node.get("attr", {}).get(key, {}).get("list", {}).get("s", [])]


def same_pads(size, k, s):
    """TensorFlow's SAME padding for one spatial axis: (before, after)."""
    out = (size + s - 1) // s
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


class Converter:
    def __init__(self, model_json):
        self.dir = os.path.dirname(os.path.abspath(model_json))
        self.model = json.load(open(model_json))
        if self.model.get("format") != "graph-model":
            raise SystemExit("not a TensorFlow.js graph model: " + model_json)
        self.weights = load_weights(self.dir, self.model["weightsManifest"])
        self.nodes = []
        self.inits = []
        self.shape = {}  # tensor name -> NCHW (4-D) or plain shape
        self.consts = {}
        self.uid = 0

    def name(self, base):
        self.uid += 1
        return "%s__%d" % (base, self.uid)

    def const(self, base, arr):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), n))
        return n

    def pad_spatial(self, x, pads_hw):
        """pads_hw: (top, bottom, left, right); a Pad node when any is non-zero."""
        t, b, l, r = pads_hw
        if not any(pads_hw):
            return x
        n, c, h, w = self.shape[x]
        y = self.name(x + "/pad")
        self.nodes.append(helper.make_node("Pad", [x], [y], mode="constant", value=0.0,
                                           pads=[0, 0, t, l, 0, 0, b, r]))
        self.shape[y] = [n, c, h + t + b, w + l + r]
        return y

    def conv(self, node, x, kernel, bias, depthwise):
        strides = attr_list(node, "strides")[1:3]
        dil = attr_list(node, "dilations") or [1, 1, 1, 1]
        if dil[1:3] != [1, 1]:
            raise SystemExit("dilated convolution not supported: " + node["name"])
        padding = attr_str(node, "padding")
        kh, kw = kernel.shape[0], kernel.shape[1]
        n, c, h, w = self.shape[x]
        if padding == "SAME":
            t, b = same_pads(h, kh, strides[0])
            l, r = same_pads(w, kw, strides[1])
        elif padding == "VALID":
            t = b = l = r = 0
        else:
            raise SystemExit("padding %s not supported: %s" % (padding, node["name"]))
        sym = t == b and l == r
        if not sym:
            x = self.pad_spatial(x, (t, b, l, r))
            t = b = l = r = 0
            n, c, h, w = self.shape[x]
        if depthwise:
            # TF: [kh, kw, in, multiplier] -> ONNX: [in * multiplier, 1, kh, kw], group = in
            cin, mult = kernel.shape[2], kernel.shape[3]
            wt = kernel.transpose(2, 3, 0, 1).reshape(cin * mult, 1, kh, kw)
            group, cout = cin, cin * mult
        else:
            # TF: [kh, kw, in, out] -> ONNX: [out, in, kh, kw]
            wt = kernel.transpose(3, 2, 0, 1)
            group, cout = 1, kernel.shape[3]
        ins = [x, self.const(node["name"] + "/W", wt.astype(np.float32))]
        if bias is not None:
            ins.append(self.const(node["name"] + "/B", bias.reshape(-1).astype(np.float32)))
        y = self.name(node["name"] + "/conv")
        self.nodes.append(helper.make_node("Conv", ins, [y], kernel_shape=[kh, kw], strides=strides,
                                           pads=[t, l, b, r], group=group, dilations=[1, 1]))
        oh = (h + t + b - kh) // strides[0] + 1
        ow = (w + l + r - kw) // strides[1] + 1
        self.shape[y] = [n, cout, oh, ow]
        return y

    def prelu(self, x, alpha, out):
        c = self.shape[x][1]
        a = alpha.reshape(-1).astype(np.float32)
        if a.size == 1:
            a = np.full(c, a[0], np.float32)
        self.nodes.append(helper.make_node("PRelu", [x, self.const(out + "/slope", a.reshape(c, 1, 1))], [out]))
        self.shape[out] = list(self.shape[x])

    def unary(self, op, x, out, **attrs):
        self.nodes.append(helper.make_node(op, [x], [out], **attrs))
        self.shape[out] = list(self.shape[x])

    def channel_const(self, x, arr):
        """A constant operand broadcast against x: per-channel vectors become [1, C, 1, 1]."""
        arr = np.asarray(arr, np.float32)
        if arr.size == 1:
            return arr.reshape([1] * len(self.shape[x]))
        if len(self.shape[x]) == 4:
            return arr.reshape(1, -1, 1, 1)
        return arr.reshape(1, -1)

    def to_nhwc(self, x):
        if len(self.shape[x]) != 4:
            return x
        y = self.name(x + "/nhwc")
        self.nodes.append(helper.make_node("Transpose", [x], [y], perm=[0, 2, 3, 1]))
        n, c, h, w = self.shape[x]
        self.shape[y] = [n, h, w, c]
        return y

    def convert(self):
        graph_nodes = self.model["modelTopology"]["node"]
        inputs, outputs = [], []
        alias = {}

        def src(name):
            name = name.split(":")[0]
            while name in alias:
                name = alias[name]
            return name

        for node in graph_nodes:
            op, nm = node["op"], node["name"]
            ins = [src(i) for i in node.get("input", []) if not i.startswith("^")]
            if op == "Const":
                if nm in self.weights:
                    self.consts[nm] = self.weights[nm]
                else:
                    v = node.get("attr", {}).get("value", {}).get("tensor")
                    if v is None:
                        raise SystemExit("constant without a value: " + nm)
                    raise SystemExit("inline constants not supported: " + nm)
                continue
            if op == "Placeholder":
                dims = [int(d["size"]) for d in node["attr"]["shape"]["shape"]["dim"]]
                n, h, w, c = dims
                self.shape[nm] = [1, c, h, w]
                inputs.append(helper.make_tensor_value_info(nm, TensorProto.FLOAT, [1, c, h, w]))
                continue
            if op == "Identity":
                if ins[0] in self.consts:
                    self.consts[nm] = self.consts[ins[0]]
                    continue
                self.unary("Identity", ins[0], nm)
                outputs.append(nm)
                continue
            if op in ("_FusedConv2D", "Conv2D", "DepthwiseConv2dNative"):
                x, kernel = ins[0], self.consts[ins[1]]
                fused = attr_strs(node, "fused_ops") if op == "_FusedConv2D" else []
                bias = self.consts[ins[2]] if fused and fused[0] == "BiasAdd" else None
                if fused and fused[0] != "BiasAdd":
                    raise SystemExit("fused ops %s not supported: %s" % (fused, nm))
                y = self.conv(node, x, kernel, bias, op == "DepthwiseConv2dNative")
                act = fused[1] if len(fused) > 1 else None
                if act is None:
                    self.unary("Identity", y, nm)
                elif act == "Relu":
                    self.unary("Relu", y, nm)
                elif act == "Prelu":
                    self.prelu(y, self.consts[ins[3]], nm)
                else:
                    raise SystemExit("fused activation %s not supported: %s" % (act, nm))
                continue
            if op == "Prelu":
                self.prelu(ins[0], self.consts[ins[1]], nm)
                continue
            if op in ("Relu", "Sigmoid"):
                self.unary(op, ins[0], nm)
                continue
            if op == "Softmax":
                self.unary("Softmax", ins[0], nm, axis=len(self.shape[ins[0]]) - 1)
                continue
            if op in ("AddV2", "Add", "Mul"):
                a, b = ins
                if a in self.consts and b not in self.consts:
                    a, b = b, a
                onnx_op = "Mul" if op == "Mul" else "Add"
                if b in self.consts:
                    b = self.const(nm + "/k", self.channel_const(a, self.consts[b]))
                self.nodes.append(helper.make_node(onnx_op, [a, b], [nm]))
                self.shape[nm] = list(self.shape[a])
                continue
            if op in ("Minimum", "Maximum"):
                # ReLU6 and friends: a clip against a scalar constant.
                a, b = ins
                if a in self.consts:
                    a, b = b, a
                k = np.asarray(self.consts[b], np.float32)
                if k.size != 1:
                    raise SystemExit("%s against a non-scalar not supported: %s" % (op, nm))
                lim = float(k.reshape(-1)[0])
                if op == "Minimum":
                    self.unary("Clip", a, nm, min=-3.0e38, max=lim)
                else:
                    self.unary("Clip", a, nm, min=lim, max=3.0e38)
                continue
            if op == "MaxPool":
                x = ins[0]
                k = attr_list(node, "ksize")[1:3]
                s = attr_list(node, "strides")[1:3]
                n, c, h, w = self.shape[x]
                if attr_str(node, "padding") == "SAME":
                    t, b = same_pads(h, k[0], s[0])
                    l, r = same_pads(w, k[1], s[1])
                    if any((t, b, l, r)):
                        raise SystemExit("padded max pooling not supported: " + nm)
                self.nodes.append(helper.make_node("MaxPool", [x], [nm], kernel_shape=k, strides=s,
                                                   pads=[0, 0, 0, 0]))
                self.shape[nm] = [n, c, (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1]
                continue
            if op == "Pad":
                x, p = ins[0], np.asarray(self.consts[ins[1]]).reshape(-1, 2)
                # NHWC paddings -> NCHW
                nchw = p[[0, 3, 1, 2]]
                pads = [int(v) for v in nchw[:, 0]] + [int(v) for v in nchw[:, 1]]
                self.nodes.append(helper.make_node("Pad", [x], [nm], mode="constant", value=0.0, pads=pads))
                self.shape[nm] = [d + int(a) + int(b) for d, (a, b) in zip(self.shape[x], nchw)]
                continue
            if op == "Reshape":
                x = self.to_nhwc(ins[0])
                target = [int(v) for v in np.asarray(self.consts[ins[1]]).reshape(-1)]
                total = int(np.prod(self.shape[x]))
                if -1 in target:
                    known = int(np.prod([v for v in target if v != -1]))
                    target[target.index(-1)] = total // known
                if target[0] != 1:
                    target = [1] + target[1:] if len(target) > 1 else [1, total]
                self.nodes.append(helper.make_node(
                    "Reshape", [x, self.const(nm + "/shape", np.array(target, np.int64))], [nm]))
                self.shape[nm] = target
                continue
            if op == "ConcatV2":
                parts, axis = ins[:-1], int(np.asarray(self.consts[ins[-1]]).reshape(-1)[0])
                rank = len(self.shape[parts[0]])
                axis = axis % rank
                if rank == 4:
                    axis = [0, 2, 3, 1][axis]  # NHWC axis -> NCHW axis
                self.nodes.append(helper.make_node("Concat", parts, [nm], axis=axis))
                shp = list(self.shape[parts[0]])
                shp[axis] = sum(self.shape[p][axis] for p in parts)
                self.shape[nm] = shp
                continue
            if op == "Mean":
                x = ins[0]
                axes = [int(v) for v in np.asarray(self.consts[ins[1]]).reshape(-1)]
                if sorted(axes) != [1, 2] or len(self.shape[x]) != 4:
                    raise SystemExit("Mean over %s not supported: %s" % (axes, nm))
                n, c = self.shape[x][:2]
                g = self.name(nm + "/gap")
                self.nodes.append(helper.make_node("GlobalAveragePool", [x], [g]))
                self.nodes.append(helper.make_node("Flatten", [g], [nm], axis=1))
                self.shape[nm] = [n, c]
                continue
            if op == "_FusedMatMul":
                if node["attr"].get("transpose_a", {}).get("b") or node["attr"].get("transpose_b", {}).get("b"):
                    raise SystemExit("transposed MatMul not supported: " + nm)
                fused = attr_strs(node, "fused_ops")
                if not fused or fused[0] != "BiasAdd":
                    raise SystemExit("fused ops %s not supported: %s" % (fused, nm))
                x, wmat, bias = ins[0], self.consts[ins[1]], self.consts[ins[2]]
                y = self.name(nm + "/gemm") if len(fused) > 1 else nm
                # [out, in] with transB, the form OpenCV's importer reads as a fully connected layer.
                self.nodes.append(helper.make_node(
                    "Gemm", [x, self.const(nm + "/W", np.ascontiguousarray(wmat.T).astype(np.float32)),
                             self.const(nm + "/B", bias.reshape(-1).astype(np.float32))], [y], transB=1))
                self.shape[y] = [self.shape[x][0], wmat.shape[1]]
                if len(fused) > 1:
                    if fused[1] != "Relu":
                        raise SystemExit("fused activation %s not supported: %s" % (fused[1], nm))
                    self.unary("Relu", y, nm)
                continue
            if op == "MatMul":
                x, wmat = ins
                self.nodes.append(helper.make_node("MatMul", [x, self.const(nm + "/W", self.consts[wmat])], [nm]))
                self.shape[nm] = [self.shape[x][0], self.consts[wmat].shape[1]]
                continue
            if op == "BiasAdd":
                x, b = ins
                self.nodes.append(helper.make_node(
                    "Add", [x, self.const(nm + "/k", self.channel_const(x, self.consts[b]))], [nm]))
                self.shape[nm] = list(self.shape[x])
                continue
            raise SystemExit("operation %s not supported (node %s)" % (op, nm))

        # Outputs: graph outputs are the Identity nodes (model signature order is by name).
        if not outputs:
            # FaceRes: no Identity; its signature names the outputs.
            sig = self.model.get("signature", {}).get("outputs", {})
            outputs = [src(v["name"]) for v in sig.values()]
        outputs = sorted(set(outputs))
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, self.shape[o]) for o in outputs]
        graph = helper.make_graph(self.nodes, "converted", inputs, outs, self.inits)
        model = helper.make_model(graph, producer_name="imago tfjs_to_onnx",
                                  opset_imports=[helper.make_opsetid("", 9)])
        model.ir_version = 4
        onnx.checker.check_model(model)
        return model


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = Converter(sys.argv[1]).convert()
    onnx.save(model, sys.argv[2])
    g = model.graph
    print("%s: %d nodes, inputs %s, outputs %s" % (
        sys.argv[2], len(g.node),
        [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim]) for i in g.input if not i.name.endswith("__")],
        [(o.name, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in g.output]))


if __name__ == "__main__":
    main()
