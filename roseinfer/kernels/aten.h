// What the kernels use of PyTorch: ATen's tensor (with its operators), its thread pool and the
// few ops they call.
// Not <torch/extension.h>: its autograd, nn and pybind11 headers took ~17 s to parse in every
// file (~4 s for these), most of a build's time; bindings.cpp alone includes pybind11's side.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linear.h>
