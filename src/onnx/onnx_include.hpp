// Debian's ONNX headers declare their symbols with ONNX_API, which they leave undefined.
#pragma once

#ifndef ONNX_API
#define ONNX_API
#endif
#include <onnx/onnx_pb.h>
#include <onnx/onnx-data.pb.h>
