// SPDX-License-Identifier: LGPL-3.0-or-later
#include "flex_file.hpp"

#include <algorithm>
#include <deque>
#include <tuple>

namespace flexfiles::client {

namespace {

// a is at least as new as b.
bool not_older(const nfs3::Fattr& a, const nfs3::Fattr& b) {
    return std::tie(a.ctime, a.mtime, a.size) >= std::tie(b.ctime, b.mtime, b.size);
}

NfsTime to_nfs_time(std::chrono::microseconds us) {
    return NfsTime{us.count() / 1000000, static_cast<uint32_t>(us.count() % 1000000) * 1000};
}

const char* proc_name(uint32_t proc) {
    switch (proc) {
    case nfs3::kProcGetattr:
        return "GETATTR";
    case nfs3::kProcRead:
        return "READ";
    case nfs3::kProcWrite:
        return "WRITE";
    case nfs3::kProcCommit:
        return "COMMIT";
    default:
        return "NFSv3 call";
    }
}

// The nfsstat4 an NFSv3 outcome is reported as (ff_ioerr4, LAYOUTERROR).
uint32_t reported_status(const nfs3::CallOutcome& o) {
    if (o.rpc_status != RpcStatus::ok) {
        // Unreachable or silent data server: what RFC 8435 clients report for it.
        return NFS4ERR_NXIO;
    }
    if (!o.error.empty()) {
        return NFS4ERR_IO;
    }
    return nfs3::to_nfs4_status(o.status);
}

} // namespace

AttrMask wcc_getattr_attrs() {
    return {FATTR4_CHANGE,      FATTR4_SIZE,          FATTR4_SPACE_USED,
            FATTR4_TIME_ACCESS, FATTR4_TIME_METADATA, FATTR4_TIME_MODIFY};
}

// ---- IoOutcome ----------------------------------------------------------------------

bool IoOutcome::ok() const {
    return first_failure() == nullptr;
}

const DataServerIo* IoOutcome::first_failure() const {
    for (const DataServerIo& c : calls) {
        if (!c.ok()) {
            return &c;
        }
    }
    return nullptr;
}

std::string IoOutcome::describe() const {
    const DataServerIo* f = first_failure();
    if (!f) {
        return "ok (" + std::to_string(calls.size()) + " calls)";
    }
    return std::string(proc_name(f->proc)) + " to mirror " + std::to_string(f->mirror) + " at " +
           std::to_string(f->offset) + "+" + std::to_string(f->length) + ": " +
           f->outcome.describe();
}

// ---- FlexFile: open, layout ---------------------------------------------------------

FlexFile::FlexFile(PnfsClient& client, OpenFile file)
    : client_(client), file_(std::move(file)), recall_(client_.recalls().add(file_.fh)) {}

FlexFile::~FlexFile() {
    client_.recalls().remove(recall_);
}

std::unique_ptr<FlexFile> FlexFile::open(PnfsClient& client, std::string_view path,
                                         const FlexOpenOptions& options) {
    OpenOptions o;
    o.access = options.access;
    o.create = options.create;
    o.truncate = options.truncate;
    o.exclusive = options.exclusive;
    o.mode = options.mode;
    OpenFile f = open_path(client.session(), path, o);
    return std::unique_ptr<FlexFile>(new FlexFile(client, std::move(f)));
}

const FlexLayout& FlexFile::layout() const {
    if (!layout_) {
        throw std::logic_error(file_.path + ": no layout held");
    }
    return *layout_;
}

uint32_t FlexFile::layoutget(uint32_t iomode) {
    LayoutGetArgs a;
    a.iomode = iomode;
    a.stateid = layout_ ? layout_->stateid : file_.stateid;
    a.maxcount = client_.options().layoutget_maxcount;
    Compound c;
    c.putfh(file_.fh).layoutget(a);
    CompoundResult r = client_.session().send(c);
    const auto status = r.status_of(1);
    if (!r.replied() || r.status_of(0) != NFS4_OK || !status) {
        r.check("layoutget " + file_.path);
        throw NfsError(NFS4ERR_SERVERFAULT, NFS4_OP_LAYOUTGET,
                       "layoutget " + file_.path + ": no LAYOUTGET result");
    }
    if (*status != NFS4_OK) {
        return *status;
    }
    FlexLayout layout = decode_layoutget(r.layoutget(1));

    std::vector<FlexDataFile> files;
    for (std::size_t m = 0; m < layout.mirrors.size(); ++m) {
        for (std::size_t i = 0; i < layout.mirrors[m].data_servers.size(); ++i) {
            FlexDataFile f;
            f.mirror = m;
            f.index = i;
            f.ds = layout.mirrors[m].data_servers[i];
            const FlexDeviceAddr dev = client_.device(f.ds.deviceid);
            const FlexDeviceVersion* v3 = dev.nfs3();
            if (!v3) {
                throw NfsError(NFS4ERR_NXIO, NFS4_OP_GETDEVICEINFO,
                               "device " + format_deviceid(f.ds.deviceid) +
                                   " offers no NFSv3 (this client speaks NFSv3 to data servers)");
            }
            f.rsize = v3->rsize;
            f.wsize = v3->wsize;
            f.address = dev.tcp_address();
            // A data file this client already knew (same device and filehandle) keeps what
            // it learnt: attributes, verifier, counters.
            for (const FlexDataFile& old : files_) {
                if (old.ds.deviceid == f.ds.deviceid && old.ds.fh_versions == f.ds.fh_versions) {
                    f.attrs = old.attrs;
                    f.write_verf = old.write_verf;
                    f.uncommitted = old.uncommitted;
                    f.read_ops = old.read_ops;
                    f.read_bytes = old.read_bytes;
                    f.write_ops = old.write_ops;
                    f.write_bytes = old.write_bytes;
                    f.read_busy = old.read_busy;
                    f.write_busy = old.write_busy;
                }
            }
            files.push_back(std::move(f));
        }
    }
    if (!layout_) {
        layout_since_ = std::chrono::steady_clock::now();
    }
    client_.recalls().set_layout(*recall_, layout.stateid, layout.iomode);
    layout_ = std::move(layout);
    files_ = std::move(files);
    return NFS4_OK;
}

void FlexFile::check_io_layout() const {
    if (!layout_) {
        throw std::logic_error(file_.path + ": no layout held");
    }
    if (recalled()) {
        throw LayoutRecalled(file_.path + ": the layout was recalled; return it first");
    }
    for (std::size_t m = 0; m < layout_->mirrors.size(); ++m) {
        if (layout_->mirrors[m].data_servers.size() != 1) {
            throw std::runtime_error(file_.path + ": mirror " + std::to_string(m) + " has " +
                                     std::to_string(layout_->mirrors[m].data_servers.size()) +
                                     " data servers; only one per mirror is supported");
        }
    }
    if (layout_->mirrors.empty()) {
        throw std::runtime_error(file_.path + ": the layout has no mirrors");
    }
}

std::vector<std::size_t> FlexFile::mirror_files(std::size_t mirror) const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < files_.size(); ++i) {
        if (files_[i].mirror == mirror) {
            out.push_back(i);
        }
    }
    return out;
}

uint32_t FlexFile::chunk_size(bool for_write) const {
    uint32_t size = client_.options().io_size;
    for (const FlexDataFile& f : files_) {
        const uint32_t limit = for_write ? f.wsize : f.rsize;
        if (limit != 0) {
            size = std::min(size, limit);
        }
    }
    return std::max<uint32_t>(size, 512);
}

AuthSys FlexFile::credentials(const FlexDataFile& f) const {
    return f.ds.credentials();
}

std::shared_ptr<nfs3::Client> FlexFile::server(const FlexDataFile& f) {
    return client_.data_server(f.address);
}

void FlexFile::remember(FlexDataFile& f, const std::optional<nfs3::Fattr>& attrs) {
    keep_newest(f.attrs, attrs);
}

void FlexFile::record_error(const FlexDataFile& f, const DataServerIo& io, uint32_t opnum) {
    FlexIoError e;
    e.offset = io.offset;
    e.length = io.length;
    e.stateid = layout_ ? layout_->stateid : stateid4{};
    e.errors.push_back(DeviceError{f.ds.deviceid, reported_status(io.outcome), opnum});
    errors_.push_back(std::move(e));
}

// ---- FlexFile: I/O ------------------------------------------------------------------

IoOutcome FlexFile::try_write(uint64_t offset, std::span<const char> data, nfs3::Stable stable) {
    check_io_layout();
    const uint32_t chunk = chunk_size(true);
    const unsigned window = std::max(1u, client_.options().chunks_in_flight);
    IoOutcome out;

    struct Pending {
        std::size_t file;
        uint64_t offset;
        uint32_t length;
        std::span<const char> bytes;
        std::future<nfs3::WriteResult> reply;
    };
    std::size_t pos = 0;
    bool failed = false;
    while (pos < data.size() && !failed) {
        std::deque<Pending> pending;
        for (unsigned k = 0; k < window && pos < data.size(); ++k) {
            const uint32_t len =
                static_cast<uint32_t>(std::min<std::size_t>(chunk, data.size() - pos));
            const auto bytes = data.subspan(pos, len);
            for (std::size_t i = 0; i < files_.size(); ++i) {
                const FlexDataFile& f = files_[i];
                pending.push_back(Pending{i, offset + pos, len, bytes,
                                          server(f)->write_async(credentials(f), f.ds.fh(),
                                                                 offset + pos, bytes, stable)});
            }
            pos += len;
        }
        while (!pending.empty()) {
            Pending p = std::move(pending.front());
            pending.pop_front();
            nfs3::WriteResult r = p.reply.get();
            FlexDataFile& f = files_[p.file];
            // An NFSv3 server may write less than asked: send the rest (synchronously).
            uint32_t done = r.ok() ? std::min(r.count, p.length) : 0;
            while (r.ok() && done < p.length && r.count > 0) {
                f.write_ops++;
                f.write_bytes += r.count;
                f.write_busy += r.elapsed;
                remember(f, r.wcc.after);
                r = server(f)->write(credentials(f), f.ds.fh(), p.offset + done,
                                     p.bytes.subspan(done), stable);
                done += r.ok() ? std::min(r.count, p.length - done) : 0;
            }
            DataServerIo io;
            io.mirror = f.mirror;
            io.index = f.index;
            io.proc = nfs3::kProcWrite;
            io.offset = p.offset;
            io.length = p.length;
            io.outcome = r;
            io.count = done;
            io.attrs = r.wcc.after;
            if (r.ok() && done < p.length) {
                io.outcome.error = "short write (" + std::to_string(done) + " of " +
                                   std::to_string(p.length) + " bytes)";
            }
            f.write_ops++;
            f.write_bytes += r.ok() ? r.count : 0;
            f.write_busy += r.elapsed;
            remember(f, r.wcc.after);
            if (io.ok()) {
                if (r.committed == nfs3::Stable::unstable) {
                    f.uncommitted = true;
                }
                if (f.write_verf && *f.write_verf != r.verf) {
                    // The server restarted since an earlier UNSTABLE write: it may be lost.
                    f.uncommitted = true;
                }
                f.write_verf = r.verf;
            } else {
                record_error(f, io, NFS4_OP_WRITE);
                failed = true;
            }
            out.calls.push_back(std::move(io));
        }
    }
    if (!failed && !data.empty()) {
        last_write_end_ = std::max<uint64_t>(last_write_end_, offset + data.size());
    }
    return out;
}

void FlexFile::write(uint64_t offset, std::span<const char> data, nfs3::Stable stable) {
    const IoOutcome out = try_write(offset, data, stable);
    if (const DataServerIo* f = out.first_failure()) {
        throw DataServerError(file_.path + ": " + out.describe(), f->outcome.status,
                              f->outcome.rpc_status);
    }
}

std::vector<char> FlexFile::read(uint64_t offset, uint32_t count, std::size_t mirror, bool* eof) {
    check_io_layout();
    const auto in_mirror = mirror_files(mirror);
    if (in_mirror.empty()) {
        throw std::out_of_range(file_.path + ": the layout has no mirror " +
                                std::to_string(mirror));
    }
    FlexDataFile& f = files_[in_mirror.front()];
    nfs3::ReadResult r = server(f)->read(credentials(f), f.ds.fh(), offset, count);
    f.read_ops++;
    f.read_bytes += r.ok() ? r.count : 0;
    f.read_busy += r.elapsed;
    remember(f, r.attrs);
    if (!r.ok()) {
        DataServerIo io;
        io.mirror = f.mirror;
        io.index = f.index;
        io.proc = nfs3::kProcRead;
        io.offset = offset;
        io.length = count;
        io.outcome = r;
        record_error(f, io, NFS4_OP_READ);
        throw DataServerError(file_.path + ": READ from mirror " + std::to_string(mirror) + " at " +
                                  std::to_string(offset) + "+" + std::to_string(count) + ": " +
                                  r.describe(),
                              r.status, r.rpc_status);
    }
    if (eof) {
        *eof = r.eof;
    }
    return std::move(r.data);
}

std::vector<char> FlexFile::read_all(std::size_t mirror) {
    const uint32_t chunk = chunk_size(false);
    std::vector<char> out;
    bool eof = false;
    while (!eof) {
        std::vector<char> part = read(out.size(), chunk, mirror, &eof);
        if (part.empty() && !eof) {
            throw DataServerError(file_.path + ": empty READ without eof at " +
                                      std::to_string(out.size()),
                                  nfs3::Status::io, RpcStatus::ok);
        }
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

IoOutcome FlexFile::commit(bool all) {
    check_io_layout();
    IoOutcome out;
    std::vector<std::pair<std::size_t, std::future<nfs3::CommitResult>>> pending;
    for (std::size_t i = 0; i < files_.size(); ++i) {
        FlexDataFile& f = files_[i];
        if (all || f.uncommitted) {
            pending.emplace_back(i, server(f)->commit_async(credentials(f), f.ds.fh()));
        }
    }
    for (auto& [i, reply] : pending) {
        nfs3::CommitResult r = reply.get();
        FlexDataFile& f = files_[i];
        remember(f, r.wcc.after);
        DataServerIo io;
        io.mirror = f.mirror;
        io.index = f.index;
        io.proc = nfs3::kProcCommit;
        io.outcome = r;
        io.attrs = r.wcc.after;
        if (r.ok() && f.write_verf && *f.write_verf != r.verf) {
            io.outcome.error = "the write verifier changed: the server restarted and may have "
                               "lost UNSTABLE writes";
        }
        if (io.ok()) {
            f.uncommitted = false;
        } else {
            record_error(f, io, NFS4_OP_COMMIT);
        }
        out.calls.push_back(std::move(io));
    }
    return out;
}

IoOutcome FlexFile::refresh_attrs() {
    if (!layout_) {
        throw std::logic_error(file_.path + ": no layout held");
    }
    IoOutcome out;
    std::vector<std::pair<std::size_t, std::future<nfs3::GetattrResult>>> pending;
    for (std::size_t i = 0; i < files_.size(); ++i) {
        FlexDataFile& f = files_[i];
        pending.emplace_back(i, server(f)->getattr_async(credentials(f), f.ds.fh()));
    }
    for (auto& [i, reply] : pending) {
        nfs3::GetattrResult r = reply.get();
        FlexDataFile& f = files_[i];
        remember(f, r.attrs);
        DataServerIo io;
        io.mirror = f.mirror;
        io.index = f.index;
        io.proc = nfs3::kProcGetattr;
        io.outcome = r;
        io.attrs = r.attrs;
        out.calls.push_back(std::move(io));
    }
    return out;
}

// ---- FlexFile: LAYOUT_WCC, LAYOUTCOMMIT, LAYOUTERROR, LAYOUTRETURN, CLOSE -------------

void keep_newest(std::optional<nfs3::Fattr>& slot, const std::optional<nfs3::Fattr>& attrs) {
    if (attrs && (!slot || not_older(*attrs, *slot))) {
        slot = attrs;
    }
}

FlexLayoutWcc build_layout_wcc(const FlexLayout& l, const std::vector<FlexDataFile>& files) {
    FlexLayoutWcc body;
    body.mirrors.resize(l.mirrors.size());
    for (std::size_t m = 0; m < l.mirrors.size(); ++m) {
        for (std::size_t i = 0; i < l.mirrors[m].data_servers.size(); ++i) {
            const FlexDataServer& ds = l.mirrors[m].data_servers[i];
            DataServerWcc w;
            w.deviceid = ds.deviceid;
            w.stateid = ds.stateid;
            w.fh_versions = ds.fh_versions;
            for (const FlexDataFile& f : files) {
                if (f.mirror == m && f.index == i && f.attrs) {
                    w.attrs = table1_attrs(*f.attrs);
                }
            }
            body.mirrors[m].data_servers.push_back(std::move(w));
        }
    }
    return body;
}

FlexLayoutWcc FlexFile::layout_wcc() const {
    return build_layout_wcc(layout(), files_);
}

std::vector<char> FlexFile::layout_wcc_body() const {
    return encode_flex_layout_wcc(layout_wcc());
}

WccGetattr FlexFile::send_layout_wcc_and_getattr(const AttrMask& attrs) {
    const std::vector<char> body = layout_wcc_body();
    WccGetattr out;
    Compound c;
    c.putfh(file_.fh).layout_wcc(layout_->stateid, LAYOUT4_FLEX_FILES, body).getattr(attrs);
    CompoundResult r = client_.session().send(c);
    out.elapsed = r.elapsed;
    out.compounds = 1;
    if (!r.replied() || r.status_of(0) != NFS4_OK || !r.status_of(1)) {
        r.check("layout_wcc " + file_.path);
    }
    out.wcc_status = r.status_of(1);
    if (*out.wcc_status == NFS4_OK) {
        r.check("layout_wcc+getattr " + file_.path);
        out.attrs = r.attrs(2);
        return out;
    }
    WccGetattr again = getattr(attrs);
    out.attrs = std::move(again.attrs);
    out.elapsed += again.elapsed;
    out.compounds = 2;
    return out;
}

WccGetattr FlexFile::getattr(const AttrMask& attrs) {
    Compound c;
    c.putfh(file_.fh).getattr(attrs);
    CompoundResult r = client_.session().send(c);
    r.check("getattr " + file_.path);
    WccGetattr out;
    out.attrs = r.attrs(1);
    out.elapsed = r.elapsed;
    out.compounds = 1;
    return out;
}

std::optional<uint64_t> FlexFile::layoutcommit() {
    const FlexLayout& l = layout();
    LayoutCommitArgs a;
    a.stateid = l.stateid;
    if (last_write_end_ > 0) {
        a.last_write_offset = last_write_end_ - 1;
    }
    std::optional<nfs3::Time> newest;
    for (const FlexDataFile& f : files_) {
        if (f.attrs && (!newest || f.attrs->mtime > *newest)) {
            newest = f.attrs->mtime;
        }
    }
    if (newest) {
        a.time_modify = nfstime4{static_cast<int64_t>(newest->seconds), newest->nseconds};
    }
    Compound c;
    c.putfh(file_.fh).layoutcommit(a);
    CompoundResult r = client_.session().send(c);
    r.check("layoutcommit " + file_.path);
    return r.layoutcommit_newsize(1);
}

FlexLayoutReturn FlexFile::return_report(bool with_stats) const {
    FlexLayoutReturn out;
    out.ioerr_report = errors_;
    if (!with_stats || !layout_) {
        return out;
    }
    const auto held = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - layout_since_);
    for (const FlexDataFile& f : files_) {
        FlexIoStats s;
        s.offset = 0;
        s.length = NFS4_UINT64_MAX;
        s.stateid = layout_->stateid;
        s.read_count = f.read_ops;
        s.read_bytes = f.read_bytes;
        s.write_count = f.write_ops;
        s.write_bytes = f.write_bytes;
        s.deviceid = f.ds.deviceid;
        s.netid = f.address.host.find(':') == std::string::npos ? "tcp" : "tcp6";
        s.uaddr = format_universal_address(f.address.host, f.address.port);
        s.fh = f.ds.fh_versions.empty() ? FileHandle{} : f.ds.fh_versions.front();
        s.read = FlexIoLatency{f.read_ops,
                               f.read_bytes,
                               f.read_ops,
                               f.read_bytes,
                               0,
                               to_nfs_time(f.read_busy),
                               to_nfs_time(f.read_busy)};
        s.write = FlexIoLatency{f.write_ops,
                                f.write_bytes,
                                f.write_ops,
                                f.write_bytes,
                                0,
                                to_nfs_time(f.write_busy),
                                to_nfs_time(f.write_busy)};
        s.duration = to_nfs_time(held);
        s.local = false;
        out.iostats_report.push_back(std::move(s));
    }
    return out;
}

uint32_t FlexFile::layouterror() {
    const FlexLayout& l = layout();
    if (errors_.empty()) {
        return NFS4_OK;
    }
    uint64_t first = UINT64_MAX, end = 0;
    std::vector<DeviceError> errors;
    for (const FlexIoError& e : errors_) {
        first = std::min(first, e.offset);
        end = std::max(end, e.length > UINT64_MAX - e.offset ? UINT64_MAX : e.offset + e.length);
        errors.insert(errors.end(), e.errors.begin(), e.errors.end());
    }
    Compound c;
    c.putfh(file_.fh).layouterror(first, end - first, l.stateid, errors);
    CompoundResult r = client_.session().send(c);
    if (!r.replied() || r.status_of(0) != NFS4_OK || !r.status_of(1)) {
        r.check("layouterror " + file_.path);
    }
    return *r.status_of(1);
}

void FlexFile::layoutreturn(bool with_stats) {
    layout(); // throws without one
    LayoutReturnArgs a;
    a.stateid = client_.recalls().stateid(*recall_); // the recall's, after a FILE recall
    a.iomode = LAYOUTIOMODE4_ANY;
    a.body = encode_ff_layoutreturn4(return_report(with_stats), client_.options().iostats_counts);
    Compound c;
    c.putfh(file_.fh).layoutreturn(a);
    CompoundResult r = client_.session().send(c);
    r.check("layoutreturn " + file_.path);
    client_.recalls().clear_layout(*recall_);
    layout_.reset();
    errors_.clear();
}

void FlexFile::close() {
    if (!open_) {
        return;
    }
    close_file(client_.session(), file_);
    open_ = false;
    client_.recalls().clear_layout(*recall_);
    layout_.reset(); // return-on-close, or no longer usable without an open
}

} // namespace flexfiles::client
