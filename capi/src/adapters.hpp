// The C callbacks (stepback_source, stepback_sink) behind the C++ layers' BodySource and
// ResponseSink: the object keeps the C struct and hands the C++ side a pointer to it.
#ifndef STEPBACK_CAPI_SRC_ADAPTERS_HPP_
#define STEPBACK_CAPI_SRC_ADAPTERS_HPP_

#include <cstddef>
#include <cstdint>

#include "stepback/https/client.hpp"
#include "stepback/https/http/request.hpp"
#include "stepback/https/types.hpp"
#include "stepback/stepback.h"

namespace stepback::capi {

// A BodySource reading through `*c` (which must outlive it).
inline https::BodySource source_of(const stepback_source* c) {
  https::BodySource s;
  s.read = [](void* context, std::uint64_t offset, https::MutableBytes out) -> std::size_t {
    const auto* src = static_cast<const stepback_source*>(context);
    const std::size_t n = src->read(src->context, offset, out.data, out.size);
    return n > out.size ? 0 : n;  // A reader that claims more than it was given wrote nothing.
  };
  s.context = const_cast<stepback_source*>(c);
  s.size = c->size;
  return s;
}

// A ResponseSink writing through `*c` (which must outlive it); a `*c` without write()
// discards the body.
inline https::ResponseSink sink_of(const stepback_sink* c) {
  https::ResponseSink s;
  s.write = [](void* context, std::uint64_t offset, https::ConstBytes data) {
    const auto* sink = static_cast<const stepback_sink*>(context);
    return sink->write == nullptr || sink->write(sink->context, offset, data.data, data.size);
  };
  s.restart = [](void* context) {
    const auto* sink = static_cast<const stepback_sink*>(context);
    if (sink->write == nullptr) return true;  // No sink: the body is discarded.
    return sink->restart != nullptr && sink->restart(sink->context);
  };
  s.context = const_cast<stepback_sink*>(c);
  return s;
}

}  // namespace stepback::capi

#endif  // STEPBACK_CAPI_SRC_ADAPTERS_HPP_
