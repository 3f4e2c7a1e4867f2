// Private to src/http: the Beast body type requests are read into. Small bodies collect in a
// string as with beast::http::string_body; a route that opts in (RouteOptions::spool_body) has a
// body above the threshold written to a SpoolFile as it arrives, piece by piece, so reading a
// 100 MB upload holds only the connection's read buffer in memory (docs/http.md, "Request bodies").
#pragma once
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <boost/system/errc.hpp>
#include <memory>
#include <string>

#include "util/log.h"
#include "util/spool.h"

namespace imago::http::detail {

struct SpoolBody {
  struct value_type {
    // Set before the body is read. 0: never spool (the route did not opt in).
    std::size_t threshold = 0;
    std::string dir;
    // The body: in `mem`, or (above the threshold) in `file`.
    std::string mem;
    std::shared_ptr<SpoolFile> file;
    bool spool_failed = false;  // the spool file could not be created or written (disk full...)
  };

  class reader {
   public:
    template <bool isRequest, class Fields>
    explicit reader(boost::beast::http::header<isRequest, Fields>&, value_type& b) : body_(b) {}

    void init(const boost::optional<std::uint64_t>& length, boost::beast::error_code& ec) {
      ec = {};
      // A declared length above the threshold goes to the file from its first byte; a chunked
      // body starts in memory and moves there once it grows past the threshold.
      if (length && body_.threshold > 0 && *length > body_.threshold) {
        open_file(ec);
      } else if (length) {
        body_.mem.reserve(static_cast<std::size_t>(*length));
      }
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      ec = {};
      std::size_t n = 0;
      for (auto b : boost::beast::buffers_range_ref(buffers)) {
        const char* p = static_cast<const char*>(b.data());
        if (body_.file) {
          if (Status st = body_.file->append(p, b.size()); !st.ok()) return fail(st, ec);
        } else {
          body_.mem.append(p, b.size());
          if (body_.threshold > 0 && body_.mem.size() > body_.threshold) {
            open_file(ec);
            if (ec) return 0;
            if (Status st = body_.file->append(body_.mem.data(), body_.mem.size()); !st.ok())
              return fail(st, ec);
            std::string().swap(body_.mem);  // give the memory back, not only the length
          }
        }
        n += b.size();
      }
      return n;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    void open_file(boost::beast::error_code& ec) {
      auto f = SpoolFile::create(body_.dir);
      if (!f.ok()) {
        fail(f.status(), ec);
        return;
      }
      body_.file = std::move(f).value();
    }
    std::size_t fail(const Status& st, boost::beast::error_code& ec) {
      log::error("request_spool_failed", {{"error", st.message()}});
      body_.spool_failed = true;
      ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
      return 0;
    }

    value_type& body_;
  };
};

}  // namespace imago::http::detail
