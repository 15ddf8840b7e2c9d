// SPDX-License-Identifier: LGPL-3.0-or-later
#include "nfs3.hpp"

#include "xdr_stream.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace flexfiles::client::nfs3 {

namespace {

// ---- One routine per XDR type; the stream's direction says encode or decode. --------

bool xdr_u32(XDR* x, uint32_t& v) {
    return xdr_uint32_t(x, &v);
}

bool xdr_u64(XDR* x, uint64_t& v) {
    return xdr_uint64_t(x, &v);
}

bool xdr_bool3(XDR* x, bool& v) {
    uint32_t w = v ? 1 : 0;
    if (!xdr_uint32_t(x, &w) || w > 1) {
        return false;
    }
    v = w == 1;
    return true;
}

template <typename Enum> bool xdr_enum32(XDR* x, Enum& v) {
    uint32_t w = static_cast<uint32_t>(v);
    if (!xdr_uint32_t(x, &w)) {
        return false;
    }
    v = static_cast<Enum>(w); // fixed underlying type: every value is representable
    return true;
}

// Variable-length opaque of at most `max` bytes.
bool xdr_bytes(XDR* x, std::vector<char>& v, uint32_t max) {
    uint32_t len = static_cast<uint32_t>(std::min<std::size_t>(v.size(), UINT32_MAX));
    if (x->x_op == XDR_ENCODE && v.size() > max) {
        return false;
    }
    if (!xdr_uint32_t(x, &len) || len > max) {
        return false;
    }
    if (x->x_op == XDR_DECODE) {
        // Grow with what actually arrives, so a hostile length cannot make us allocate
        // more than the reply holds (plus one chunk).
        constexpr uint32_t kChunk = 64u << 10;
        v.clear();
        while (v.size() < len) {
            const std::size_t at = v.size();
            const uint32_t n = std::min<uint32_t>(kChunk, len - static_cast<uint32_t>(at));
            v.resize(at + n);
            if (!XDR_GETBYTES(x, v.data() + at, n)) {
                return false;
            }
        }
        char pad[4];
        const uint32_t rndup = (4 - (len & 3)) & 3;
        return rndup == 0 || XDR_GETBYTES(x, pad, rndup);
    }
    return xdr_opaque_encode(x, v.data(), len);
}

bool xdr_fh3(XDR* x, FileHandle& fh) {
    return xdr_bytes(x, fh.bytes, kFhSizeMax);
}

bool xdr_string(XDR* x, std::string& s, uint32_t max) {
    std::vector<char> bytes(s.begin(), s.end());
    if (!xdr_bytes(x, bytes, max)) {
        return false;
    }
    s.assign(bytes.begin(), bytes.end());
    return true;
}

bool xdr_time3(XDR* x, Time& t) {
    return xdr_u32(x, t.seconds) && xdr_u32(x, t.nseconds);
}

bool xdr_fattr3(XDR* x, Fattr& a) {
    return xdr_u32(x, a.type) && xdr_u32(x, a.mode) && xdr_u32(x, a.nlink) && xdr_u32(x, a.uid) &&
           xdr_u32(x, a.gid) && xdr_u64(x, a.size) && xdr_u64(x, a.used) &&
           xdr_u32(x, a.rdev_major) && xdr_u32(x, a.rdev_minor) && xdr_u64(x, a.fsid) &&
           xdr_u64(x, a.fileid) && xdr_time3(x, a.atime) && xdr_time3(x, a.mtime) &&
           xdr_time3(x, a.ctime);
}

// XDR optional data (RFC 4506 section 4.19): a bool, then the value if it is true.
template <class T>
bool xdr_optional(XDR* x, std::optional<T>& v, bool (*codec)(XDR*, T&)) {
    bool follows = v.has_value();
    if (!xdr_bool3(x, follows)) {
        return false;
    }
    if (!follows) {
        v.reset();
        return true;
    }
    if (x->x_op == XDR_DECODE) {
        v.emplace();
    }
    return codec(x, *v);
}

bool xdr_wcc_attr(XDR* x, WccAttr& a) {
    return xdr_u64(x, a.size) && xdr_time3(x, a.mtime) && xdr_time3(x, a.ctime);
}

// post_op_attr (fattr3) and pre_op_attr (wcc_attr).
bool xdr_post_op_attr(XDR* x, std::optional<Fattr>& a) { return xdr_optional(x, a, xdr_fattr3); }
bool xdr_pre_op_attr(XDR* x, std::optional<WccAttr>& a) {
    return xdr_optional(x, a, xdr_wcc_attr);
}

bool xdr_wcc_data(XDR* x, Wcc& w) {
    return xdr_pre_op_attr(x, w.before) && xdr_post_op_attr(x, w.after);
}

bool xdr_verf(XDR* x, Verifier& v) {
    if (x->x_op == XDR_DECODE) {
        return xdr_opaque_decode(x, v.data(), v.size());
    }
    return xdr_opaque_encode(x, v.data(), v.size());
}

// ---- Messages. ----------------------------------------------------------------------

bool xdr_args(XDR* x, GetattrArgs& a) {
    return xdr_fh3(x, a.fh);
}

bool xdr_args(XDR* x, ReadArgs& a) {
    return xdr_fh3(x, a.fh) && xdr_u64(x, a.offset) && xdr_u32(x, a.count);
}

bool xdr_args(XDR* x, WriteArgs& a) {
    // WRITE3args: file, offset, count, stable, data<>; count must equal the data length.
    uint32_t count = static_cast<uint32_t>(a.data.size());
    if (!xdr_fh3(x, a.fh) || !xdr_u64(x, a.offset) || !xdr_u32(x, count) ||
        !xdr_enum32(x, a.stable) || !xdr_bytes(x, a.data, kMaxData)) {
        return false;
    }
    return count == a.data.size();
}

bool xdr_args(XDR* x, CommitArgs& a) {
    return xdr_fh3(x, a.fh) && xdr_u64(x, a.offset) && xdr_u32(x, a.count);
}

bool xdr_res(XDR* x, GetattrResult& r) {
    if (!xdr_enum32(x, r.status)) {
        return false;
    }
    if (r.status != Status::ok) {
        r.attrs.reset();
        return true;
    }
    if (x->x_op == XDR_DECODE) {
        r.attrs.emplace();
    }
    return r.attrs.has_value() && xdr_fattr3(x, *r.attrs);
}

bool xdr_res(XDR* x, ReadResult& r) {
    if (!xdr_enum32(x, r.status) || !xdr_post_op_attr(x, r.attrs)) {
        return false;
    }
    if (r.status != Status::ok) {
        return true;
    }
    if (!xdr_u32(x, r.count) || !xdr_bool3(x, r.eof) || !xdr_bytes(x, r.data, kMaxData)) {
        return false;
    }
    return r.count == r.data.size();
}

bool xdr_res(XDR* x, WriteResult& r) {
    if (!xdr_enum32(x, r.status) || !xdr_wcc_data(x, r.wcc)) {
        return false;
    }
    if (r.status != Status::ok) {
        return true;
    }
    return xdr_u32(x, r.count) && xdr_enum32(x, r.committed) && xdr_verf(x, r.verf);
}

bool xdr_res(XDR* x, CommitResult& r) {
    if (!xdr_enum32(x, r.status) || !xdr_wcc_data(x, r.wcc)) {
        return false;
    }
    return r.status != Status::ok || xdr_verf(x, r.verf);
}

bool xdr_res(XDR* x, MountResult& r) {
    if (!xdr_u32(x, r.status)) {
        return false;
    }
    if (r.status != 0) {
        return true;
    }
    uint32_t n = static_cast<uint32_t>(r.auth_flavors.size());
    if (!xdr_fh3(x, r.fh) || !xdr_u32(x, n) || n > kMaxAuthFlavors) {
        return false;
    }
    r.auth_flavors.resize(n);
    for (uint32_t& f : r.auth_flavors) {
        if (!xdr_u32(x, f)) {
            return false;
        }
    }
    return true;
}

template <typename T>
std::vector<char> encode_with(T value, std::size_t hint, const char* what,
                              bool (*codec)(XDR*, T&)) {
    return xdr_encode(hint, what, [&](XDR* x) { return codec(x, value); });
}

// Decodes `bytes` completely with `codec`; throws XdrError naming `what`.
template <typename T>
void decode_with(std::span<const char> bytes, T& out, const char* what, bool (*codec)(XDR*, T&)) {
    XdrDecoder d(bytes);
    if (!codec(d.xdr(), out)) {
        throw XdrError(std::string("malformed or truncated ") + what + " (" +
                       std::to_string(bytes.size()) + " bytes)");
    }
    if (d.remaining() != 0) {
        throw XdrError(std::string(what) + ": " + std::to_string(d.remaining()) +
                       " bytes follow the message");
    }
}

constexpr std::size_t kHeadroom = 256;

std::string fh_prefix(const FileHandle& fh) {
    std::string h = fh.hex();
    return h.size() > 16 ? h.substr(0, 16) + ".." : h;
}

} // namespace

// ---- Names. -------------------------------------------------------------------------

std::string status_name(Status s) {
    switch (s) {
    case Status::ok:
        return "NFS3_OK";
    case Status::perm:
        return "NFS3ERR_PERM";
    case Status::noent:
        return "NFS3ERR_NOENT";
    case Status::io:
        return "NFS3ERR_IO";
    case Status::nxio:
        return "NFS3ERR_NXIO";
    case Status::acces:
        return "NFS3ERR_ACCES";
    case Status::exist:
        return "NFS3ERR_EXIST";
    case Status::xdev:
        return "NFS3ERR_XDEV";
    case Status::nodev:
        return "NFS3ERR_NODEV";
    case Status::notdir:
        return "NFS3ERR_NOTDIR";
    case Status::isdir:
        return "NFS3ERR_ISDIR";
    case Status::inval:
        return "NFS3ERR_INVAL";
    case Status::fbig:
        return "NFS3ERR_FBIG";
    case Status::nospc:
        return "NFS3ERR_NOSPC";
    case Status::rofs:
        return "NFS3ERR_ROFS";
    case Status::mlink:
        return "NFS3ERR_MLINK";
    case Status::nametoolong:
        return "NFS3ERR_NAMETOOLONG";
    case Status::notempty:
        return "NFS3ERR_NOTEMPTY";
    case Status::dquot:
        return "NFS3ERR_DQUOT";
    case Status::stale:
        return "NFS3ERR_STALE";
    case Status::remote:
        return "NFS3ERR_REMOTE";
    case Status::badhandle:
        return "NFS3ERR_BADHANDLE";
    case Status::not_sync:
        return "NFS3ERR_NOT_SYNC";
    case Status::bad_cookie:
        return "NFS3ERR_BAD_COOKIE";
    case Status::notsupp:
        return "NFS3ERR_NOTSUPP";
    case Status::toosmall:
        return "NFS3ERR_TOOSMALL";
    case Status::serverfault:
        return "NFS3ERR_SERVERFAULT";
    case Status::badtype:
        return "NFS3ERR_BADTYPE";
    case Status::jukebox:
        return "NFS3ERR_JUKEBOX";
    }
    return "NFS3ERR_" + std::to_string(static_cast<uint32_t>(s));
}

uint32_t to_nfs4_status(Status s) {
    switch (s) {
    case Status::ok:
        return NFS4_OK;
    case Status::remote:
        return NFS4ERR_IO; // no NFSv4 equivalent (NFSv4 has no "too many remote levels")
    case Status::badhandle:
        return NFS4ERR_BADHANDLE;
    case Status::not_sync:
        return NFS4ERR_INVAL;
    case Status::bad_cookie:
        return NFS4ERR_BAD_COOKIE;
    case Status::notsupp:
        return NFS4ERR_NOTSUPP;
    case Status::toosmall:
        return NFS4ERR_TOOSMALL;
    case Status::serverfault:
        return NFS4ERR_SERVERFAULT;
    case Status::badtype:
        return NFS4ERR_BADTYPE;
    case Status::jukebox:
        return NFS4ERR_DELAY;
    default:
        // NFSv4 keeps the NFSv3 numbers for the POSIX-like errors (PERM 1 ... STALE 70).
        return static_cast<uint32_t>(s) < 10000 ? static_cast<uint32_t>(s)
                                                : static_cast<uint32_t>(NFS4ERR_IO);
    }
}

const char* stable_name(Stable s) {
    switch (s) {
    case Stable::unstable:
        return "UNSTABLE";
    case Stable::data_sync:
        return "DATA_SYNC";
    case Stable::file_sync:
        return "FILE_SYNC";
    }
    return "STABLE_?";
}

std::string format_fattr(const Fattr& a) {
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "size=%" PRIu64 " used=%" PRIu64 " mode=%04o uid=%u gid=%u nlink=%u "
                  "fileid=%" PRIu64 " atime=%u.%09u mtime=%u.%09u ctime=%u.%09u",
                  a.size, a.used, a.mode, a.uid, a.gid, a.nlink, a.fileid, a.atime.seconds,
                  a.atime.nseconds, a.mtime.seconds, a.mtime.nseconds, a.ctime.seconds,
                  a.ctime.nseconds);
    return buf;
}

std::string CallOutcome::describe() const {
    if (rpc_status != RpcStatus::ok) {
        return std::string("RPC ") + to_string(rpc_status) + (error.empty() ? "" : ": " + error);
    }
    if (!error.empty()) {
        return "bad reply: " + error;
    }
    return status_name(status);
}

// ---- XDR entry points. --------------------------------------------------------------

std::vector<char> encode(const GetattrArgs& a) {
    return encode_with<GetattrArgs>(a, kHeadroom, "GETATTR3args", &xdr_args);
}
std::vector<char> encode(const ReadArgs& a) {
    return encode_with<ReadArgs>(a, kHeadroom, "READ3args", &xdr_args);
}
std::vector<char> encode(const WriteArgs& a) {
    return encode_with<WriteArgs>(a, kHeadroom + a.data.size(), "WRITE3args", &xdr_args);
}
std::vector<char> encode(const CommitArgs& a) {
    return encode_with<CommitArgs>(a, kHeadroom, "COMMIT3args", &xdr_args);
}
std::vector<char> encode_mnt_args(const std::string& dirpath) {
    std::string path = dirpath;
    return xdr_encode(kHeadroom + path.size(), "MNT dirpath",
                      [&](XDR* x) { return xdr_string(x, path, kMaxPathLen); });
}

GetattrArgs decode_getattr_args(std::span<const char> bytes) {
    GetattrArgs a;
    decode_with<GetattrArgs>(bytes, a, "GETATTR3args", &xdr_args);
    return a;
}
ReadArgs decode_read_args(std::span<const char> bytes) {
    ReadArgs a;
    decode_with<ReadArgs>(bytes, a, "READ3args", &xdr_args);
    return a;
}
WriteArgs decode_write_args(std::span<const char> bytes) {
    WriteArgs a;
    decode_with<WriteArgs>(bytes, a, "WRITE3args", &xdr_args);
    return a;
}
CommitArgs decode_commit_args(std::span<const char> bytes) {
    CommitArgs a;
    decode_with<CommitArgs>(bytes, a, "COMMIT3args", &xdr_args);
    return a;
}
std::string decode_mnt_args(std::span<const char> bytes) {
    std::string path;
    XdrDecoder d(bytes);
    if (!xdr_string(d.xdr(), path, kMaxPathLen) || d.remaining() != 0) {
        throw XdrError("malformed MNT dirpath");
    }
    return path;
}

std::vector<char> encode(const GetattrResult& r) {
    return encode_with<GetattrResult>(r, kHeadroom, "GETATTR3res", &xdr_res);
}
std::vector<char> encode(const ReadResult& r) {
    return encode_with<ReadResult>(r, kHeadroom + r.data.size(), "READ3res", &xdr_res);
}
std::vector<char> encode(const WriteResult& r) {
    return encode_with<WriteResult>(r, kHeadroom, "WRITE3res", &xdr_res);
}
std::vector<char> encode(const CommitResult& r) {
    return encode_with<CommitResult>(r, kHeadroom, "COMMIT3res", &xdr_res);
}
std::vector<char> encode(const MountResult& r) {
    return encode_with<MountResult>(r, kHeadroom + 4 * r.auth_flavors.size(), "mountres3",
                                    &xdr_res);
}

void decode(std::span<const char> bytes, GetattrResult& out) {
    decode_with<GetattrResult>(bytes, out, "GETATTR3res", &xdr_res);
}
void decode(std::span<const char> bytes, ReadResult& out) {
    decode_with<ReadResult>(bytes, out, "READ3res", &xdr_res);
}
void decode(std::span<const char> bytes, WriteResult& out) {
    decode_with<WriteResult>(bytes, out, "WRITE3res", &xdr_res);
}
void decode(std::span<const char> bytes, CommitResult& out) {
    decode_with<CommitResult>(bytes, out, "COMMIT3res", &xdr_res);
}
MountResult decode_mount_result(std::span<const char> bytes) {
    MountResult r;
    decode_with<MountResult>(bytes, r, "mountres3", &xdr_res);
    return r;
}

// ---- Client. ------------------------------------------------------------------------

namespace {

// A one-line summary of a result for the trace.
std::string summary(const CallOutcome& r) {
    return r.describe();
}
std::string summary(const GetattrResult& r) {
    return r.describe() + (r.attrs ? " " + format_fattr(*r.attrs) : "");
}
std::string summary(const ReadResult& r) {
    return r.describe() + " count=" + std::to_string(r.count) + (r.eof ? " eof" : "") +
           (r.attrs ? " " + format_fattr(*r.attrs) : "");
}
std::string summary(const WriteResult& r) {
    return r.describe() + " count=" + std::to_string(r.count) + " " + stable_name(r.committed) +
           (r.wcc.after ? " " + format_fattr(*r.wcc.after) : " (no post-op attributes)");
}
std::string summary(const CommitResult& r) {
    return r.describe() +
           (r.wcc.after ? " " + format_fattr(*r.wcc.after) : " (no post-op attributes)");
}

template <typename Result> void decode_reply(const RpcReply& reply, Result& out) {
    out.rpc_status = reply.status;
    out.elapsed = reply.elapsed;
    if (!reply.ok()) {
        out.error = reply.detail;
        return;
    }
    try {
        decode(reply.body(), out);
    } catch (const XdrError& e) {
        out.error = e.what();
    }
}

void decode_reply(const RpcReply& reply, CallOutcome& out) {
    out.rpc_status = reply.status;
    out.elapsed = reply.elapsed;
    if (!reply.ok()) {
        out.error = reply.detail;
    } else if (!reply.body().empty()) {
        out.error = std::to_string(reply.body().size()) + " bytes in a NULL reply";
    } else {
        out.status = Status::ok;
    }
}

} // namespace

Client::Client(ClientOptions options) : options_(std::move(options)) {
    if (options_.label.empty()) {
        options_.label = options_.host + ":" + std::to_string(options_.port);
    }
}

Client::~Client() {
    if (transport_) {
        transport_->close();
    }
}

std::unique_ptr<Client> Client::connect(ClientOptions options) {
    std::unique_ptr<Client> c(new Client(std::move(options)));
    try {
        c->transport_ =
            RpcTransport::connect(c->options_.host, c->options_.port, c->options_.connect_timeout);
    } catch (const std::exception& e) {
        throw TransportError(RpcStatus::connection_lost,
                             "NFSv3 data server " + c->options_.label + ": " + e.what());
    }
    return c;
}

void Client::trace(const std::string& line) const {
    if (options_.trace) {
        options_.trace("nfs3 " + options_.label + " " + line);
    }
}

template <typename Result>
std::future<Result> Client::start(uint32_t proc, const AuthSys& cred, std::vector<char> args,
                                  std::string what) {
    auto promise = std::make_shared<std::promise<Result>>();
    std::future<Result> future = promise->get_future();
    trace("=> " + what + " (uid " + std::to_string(cred.uid) + ", gid " + std::to_string(cred.gid) +
          ")");
    transport_->call_async(kProgram, kVersion, proc, cred, args, options_.timeout,
                           [this, promise, what](RpcReply&& reply) {
                               Result r;
                               decode_reply(reply, r);
                               if (options_.trace) {
                                   trace("<= " + what + ": " + summary(r));
                               }
                               promise->set_value(std::move(r));
                           });
    return future;
}

CallOutcome Client::null(const AuthSys& cred) {
    return start<CallOutcome>(kProcNull, cred, {}, "NULL").get();
}

std::future<GetattrResult> Client::getattr_async(const AuthSys& cred, const FileHandle& fh) {
    return start<GetattrResult>(kProcGetattr, cred, encode(GetattrArgs{fh}),
                                "GETATTR " + fh_prefix(fh));
}

std::future<ReadResult> Client::read_async(const AuthSys& cred, const FileHandle& fh,
                                           uint64_t offset, uint32_t count) {
    return start<ReadResult>(kProcRead, cred, encode(ReadArgs{fh, offset, count}),
                             "READ " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                 std::to_string(count));
}

std::future<WriteResult> Client::write_async(const AuthSys& cred, const FileHandle& fh,
                                             uint64_t offset, std::span<const char> data,
                                             Stable stable) {
    // Encoded directly (not through WriteArgs) to copy the payload once.
    if (fh.bytes.size() > kFhSizeMax || data.size() > kMaxData) {
        throw XdrError("WRITE3args: filehandle of " + std::to_string(fh.bytes.size()) +
                       " bytes or " + std::to_string(data.size()) + " bytes of data is too large");
    }
    std::vector<char> args = xdr_encode(kHeadroom + data.size(), "WRITE3args", [&](XDR* x) {
        return xdr_put_opaque(x, fh.bytes) && xdr_put_u64(x, offset) &&
               xdr_put_u32(x, static_cast<uint32_t>(data.size())) &&
               xdr_put_u32(x, static_cast<uint32_t>(stable)) && xdr_put_opaque(x, data);
    });
    return start<WriteResult>(kProcWrite, cred, std::move(args),
                              "WRITE " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                  std::to_string(data.size()) + " " + stable_name(stable));
}

std::future<CommitResult> Client::commit_async(const AuthSys& cred, const FileHandle& fh,
                                               uint64_t offset, uint32_t count) {
    return start<CommitResult>(kProcCommit, cred, encode(CommitArgs{fh, offset, count}),
                               "COMMIT " + fh_prefix(fh) + " " + std::to_string(offset) + "+" +
                                   std::to_string(count));
}

GetattrResult Client::getattr(const AuthSys& cred, const FileHandle& fh) {
    return getattr_async(cred, fh).get();
}
ReadResult Client::read(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                        uint32_t count) {
    return read_async(cred, fh, offset, count).get();
}
WriteResult Client::write(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                          std::span<const char> data, Stable stable) {
    return write_async(cred, fh, offset, data, stable).get();
}
CommitResult Client::commit(const AuthSys& cred, const FileHandle& fh, uint64_t offset,
                            uint32_t count) {
    return commit_async(cred, fh, offset, count).get();
}

FileHandle mount(const std::string& host, uint16_t mount_port, const std::string& dirpath,
                 const AuthSys& cred, std::chrono::milliseconds timeout) {
    const std::string where = host + ":" + std::to_string(mount_port);
    std::unique_ptr<RpcTransport> t;
    try {
        t = RpcTransport::connect(host, mount_port, timeout);
    } catch (const std::exception& e) {
        throw TransportError(RpcStatus::connection_lost, "MOUNT " + where + ": " + e.what());
    }
    const std::vector<char> args = encode_mnt_args(dirpath);
    RpcReply reply =
        t->call(kMountProgram, kMountVersion, kMountProcMnt, cred, args, timeout).get();
    t->close();
    if (!reply.ok()) {
        throw TransportError(reply.status, "MOUNT " + where + " " + dirpath + ": " + reply.detail);
    }
    MountResult r;
    try {
        r = decode_mount_result(reply.body());
    } catch (const XdrError& e) {
        throw TransportError(RpcStatus::bad_reply, "MOUNT " + where + ": " + e.what());
    }
    if (r.status != 0) {
        // mountstat3 shares its numbers with nfsstat3 for the errors it can return.
        throw NfsError(r.status, 0,
                       "MOUNT " + where + " " + dirpath +
                           " refused: " + status_name(static_cast<Status>(r.status)));
    }
    return r.fh;
}

} // namespace flexfiles::client::nfs3
