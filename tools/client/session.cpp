// SPDX-License-Identifier: LGPL-3.0-or-later
#include "session.hpp"

#include "nfs4_names.hpp"
#include "xdr_stream.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <unistd.h>

namespace flexfiles::client {

namespace {

std::string default_owner_id() {
    static std::atomic<uint32_t> counter{0};
    char host[128] = {};
    gethostname(host, sizeof(host) - 1);
    std::random_device rd;
    char buf[256];
    std::snprintf(buf, sizeof(buf), "ff-client:%s:%d:%u:%08x", host, static_cast<int>(getpid()),
                  counter++, rd());
    return buf;
}

channel_attrs4 to_wire(const ChannelAttrs& a) {
    channel_attrs4 c{};
    c.ca_headerpadsize = a.header_pad;
    c.ca_maxrequestsize = a.max_request;
    c.ca_maxresponsesize = a.max_response;
    c.ca_maxresponsesize_cached = a.max_response_cached;
    c.ca_maxoperations = a.max_ops;
    c.ca_maxrequests = a.max_requests;
    return c;
}

ChannelAttrs from_wire(const channel_attrs4& c) {
    return ChannelAttrs{c.ca_headerpadsize,          c.ca_maxrequestsize, c.ca_maxresponsesize,
                        c.ca_maxresponsesize_cached, c.ca_maxoperations,  c.ca_maxrequests};
}

std::string format_attrs(const ChannelAttrs& a) {
    return "maxreq=" + std::to_string(a.max_request) +
           " maxresp=" + std::to_string(a.max_response) +
           " cached=" + std::to_string(a.max_response_cached) +
           " maxops=" + std::to_string(a.max_ops) + " slots=" + std::to_string(a.max_requests);
}

std::string hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08x", v);
    return buf;
}

} // namespace

std::unique_ptr<Session> Session::open(SessionOptions options) {
    if (options.minor_version != 1 && options.minor_version != 2) {
        throw std::invalid_argument("minor version must be 1 or 2, not " +
                                    std::to_string(options.minor_version));
    }
    std::unique_ptr<Session> s(new Session(std::move(options)));
    try {
        s->transport_ =
            RpcTransport::connect(s->options_.host, s->options_.port, s->options_.connect_timeout);
    } catch (const std::exception& e) {
        throw TransportError(RpcStatus::connection_lost, e.what());
    }
    Session* raw = s.get();
    s->transport_->set_call_handler(
        [raw](const RpcCall& call) { return raw->backchannel_.answer(call); });
    s->establish();
    return s;
}

Session::Session(SessionOptions options)
    : options_(std::move(options)),
      backchannel_(options_.cb_program, [this](const std::string& line) { trace(line); }) {
    if (options_.owner_id.empty()) {
        options_.owner_id = default_owner_id();
    }
    slots_ = std::make_unique<SlotTable>(1);
}

Session::~Session() {
    close();
    if (transport_) {
        transport_->close(); // joins the receive thread before members go away
    }
}

void Session::trace(const std::string& line) const {
    if (options_.trace) {
        options_.trace(line);
    }
}

std::string Session::id_hex() const {
    std::string out;
    char buf[3];
    for (unsigned char c : sessionid_) {
        std::snprintf(buf, sizeof(buf), "%02x", c);
        out += buf;
    }
    return out;
}

void Session::establish() {
    const uint32_t minor = options_.minor_version;

    // EXCHANGE_ID (RFC 8881 18.35).
    {
        nfs_argop4 op;
        std::memset(&op, 0, sizeof(op));
        op.argop = NFS4_OP_EXCHANGE_ID;
        EXCHANGE_ID4args& a = op.nfs_argop4_u.opexchange_id;
        std::random_device rd;
        const uint32_t verifier[2] = {static_cast<uint32_t>(time(nullptr)), rd()};
        std::memcpy(a.eia_clientowner.co_verifier, verifier, sizeof(verifier));
        std::string owner = options_.owner_id;
        a.eia_clientowner.co_ownerid.co_ownerid_len = static_cast<u_int>(owner.size());
        a.eia_clientowner.co_ownerid.co_ownerid_val = owner.data();
        a.eia_flags = options_.exchange_flags;
        a.eia_state_protect.spa_how = SP4_NONE;
        std::string domain = "nfs-ganesha-flexfiles";
        std::string name = "ff-client";
        nfs_impl_id4 impl{};
        impl.nii_domain = {static_cast<u_int>(domain.size()), domain.data()};
        impl.nii_name = {static_cast<u_int>(name.size()), name.data()};
        a.eia_client_impl_id.eia_client_impl_id_len = 1;
        a.eia_client_impl_id.eia_client_impl_id_val = &impl;

        Compound c;
        c.no_sequence().typed(op, "EXCHANGE_ID owner=\"" + owner +
                                      "\" flags=" + hex32(options_.exchange_flags));
        CompoundResult r = send_unsequenced(c, minor);
        r.check("EXCHANGE_ID");
        const EXCHANGE_ID4resok& ok =
            r.op(0).res.nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4;
        clientid_ = ok.eir_clientid;
        eir_sequence_ = ok.eir_sequenceid;
        eir_flags_ = ok.eir_flags;
        have_clientid_ = true;
        char buf[128];
        std::snprintf(buf, sizeof(buf), "   clientid=0x%016" PRIx64 " seq=%u flags=0x%08x",
                      clientid_, eir_sequence_, eir_flags_);
        trace(buf);
    }

    // CREATE_SESSION (RFC 8881 18.36).
    {
        nfs_argop4 op;
        std::memset(&op, 0, sizeof(op));
        op.argop = NFS4_OP_CREATE_SESSION;
        CREATE_SESSION4args& a = op.nfs_argop4_u.opcreate_session;
        a.csa_clientid = clientid_;
        a.csa_sequence = eir_sequence_;
        a.csa_flags = options_.back_channel ? CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0;
        a.csa_fore_chan_attrs = to_wire(options_.fore);
        a.csa_back_chan_attrs = to_wire(options_.back);
        a.csa_cb_program = options_.cb_program;
        std::string machine = options_.cred.machine_name;
        if (machine.empty()) {
            char host[256] = {};
            gethostname(host, sizeof(host) - 1);
            machine = host;
        }
        std::vector<gid_t> gids(options_.cred.gids.begin(), options_.cred.gids.end());
        if (gids.size() > 16) {
            gids.resize(16);
        }
        callback_sec_parms4 sec{};
        sec.cb_secflavor = AUTH_SYS;
        authunix_parms& sys = sec.callback_sec_parms4_u.cbsp_sys_cred;
        sys.aup_time = static_cast<int32_t>(time(nullptr));
        sys.aup_machname = machine.data();
        sys.aup_uid = options_.cred.uid;
        sys.aup_gid = options_.cred.gid;
        sys.aup_len = static_cast<u_int>(gids.size());
        sys.aup_gids = gids.data();
        a.csa_sec_parms.csa_sec_parms_len = 1;
        a.csa_sec_parms.csa_sec_parms_val = &sec;

        Compound c;
        c.no_sequence().typed(op, "CREATE_SESSION clientid seq=" + std::to_string(eir_sequence_) +
                                      " flags=" + hex32(a.csa_flags) +
                                      " cb_program=" + hex32(a.csa_cb_program));
        CompoundResult r = send_unsequenced(c, minor);
        r.check("CREATE_SESSION");
        const CREATE_SESSION4resok& ok =
            r.op(0).res.nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4;
        std::memcpy(sessionid_, ok.csr_sessionid, NFS4_SESSIONID_SIZE);
        csr_flags_ = ok.csr_flags;
        have_session_ = true;
        fore_ = from_wire(ok.csr_fore_chan_attrs);
        back_ = from_wire(ok.csr_back_chan_attrs);
        slots_ = std::make_unique<SlotTable>(std::max<uint32_t>(fore_.max_requests, 1));
        backchannel_.bind(sessionid_, back_.max_requests);
        trace("   session=" + id_hex() + " flags=" + hex32(csr_flags_) +
              (has_back_channel() ? " (backchannel up)" : " (no backchannel)"));
        trace("   fore: " + format_attrs(fore_));
        trace("   back: " + format_attrs(back_));
    }

    // RECLAIM_COMPLETE (RFC 8881 18.51): this client has nothing to reclaim.
    if (options_.reclaim_complete) {
        Compound c;
        c.reclaim_complete(false);
        CompoundResult r = send(c);
        if (!(r.replied() && r.status_of(0) == NFS4ERR_COMPLETE_ALREADY)) {
            r.check("RECLAIM_COMPLETE");
        }
    }

    // The lease the renewer has to keep alive.
    {
        Compound c;
        c.putrootfh().getattr({FATTR4_LEASE_TIME});
        CompoundResult r = send(c);
        r.check("GETATTR lease_time");
        lease_time_ = r.attrs(1).lease_time.value_or(0);
        trace("   lease_time=" + std::to_string(lease_time_) + " s");
    }
    if (options_.renew_lease && lease_time_ > 0) {
        renewer_ = std::thread([this] { renew_loop(); });
    }
}

void Session::renew_loop() {
    const auto idle_limit = std::chrono::milliseconds(lease_time_ * 1000 / 3);
    std::unique_lock lock(renew_mu_);
    while (!renew_stop_) {
        const auto last = Clock::time_point(Clock::duration(last_sent_ns_.load()));
        const auto due = last + idle_limit;
        if (Clock::now() < due) {
            renew_cv_.wait_until(lock, due);
            continue;
        }
        lock.unlock();
        Compound c; // SEQUENCE alone renews the lease (RFC 8881 8.3)
        CompoundResult r = send(c);
        if (!r.ok()) {
            trace("   lease renewal: " + r.describe());
        }
        lock.lock();
        if (!r.replied()) {
            // Do not spin on a dead connection; the next send will report it.
            renew_cv_.wait_for(lock, idle_limit);
        }
    }
}

void Session::stop_renewer() {
    {
        std::lock_guard lock(renew_mu_);
        renew_stop_ = true;
    }
    renew_cv_.notify_all();
    if (renewer_.joinable()) {
        renewer_.join();
    }
}

CompoundResult Session::send(const Compound& c) {
    auto delay = options_.delay.first;
    for (int attempt = 1;; ++attempt) {
        CompoundResult r = send_future(c).get();
        r.attempts = attempt;
        const bool delayed = r.replied() && (r.status == NFS4ERR_DELAY);
        if (!delayed || !c.retries_on_delay() || attempt > options_.delay.max_retries) {
            return r;
        }
        trace("   NFS4ERR_DELAY: retry " + std::to_string(attempt) + " in " +
              std::to_string(delay.count()) + " ms");
        std::this_thread::sleep_for(delay);
        delay = std::min(delay * 2, options_.delay.max);
    }
}

std::future<CompoundResult> Session::send_future(const Compound& c) {
    auto promise = std::make_shared<std::promise<CompoundResult>>();
    auto future = promise->get_future();
    send_async(c, [promise](CompoundResult&& r) { promise->set_value(std::move(r)); });
    return future;
}

void Session::send_async(const Compound& c, std::function<void(CompoundResult&&)> done) {
    std::optional<SlotTable::Lease> lease;
    if (c.uses_sequence()) {
        lease = slots_->acquire(Clock::now() + options_.timeout);
        if (!lease) {
            CompoundResult r;
            r.rpc_status = RpcStatus::timed_out;
            r.ops_sent = c.size();
            r.error = slots_->usable() == 0
                          ? "no usable session slot (" + std::to_string(slots_->retired()) +
                                " retired after lost replies)"
                          : "no session slot became free in time";
            done(std::move(r));
            return;
        }
    }
    start(c, c.minor_override().value_or(options_.minor_version), lease, std::move(done));
}

CompoundResult Session::send_unsequenced(const Compound& c, uint32_t minor_version) {
    auto promise = std::make_shared<std::promise<CompoundResult>>();
    auto future = promise->get_future();
    start(c, minor_version, std::nullopt,
          [promise](CompoundResult&& r) { promise->set_value(std::move(r)); });
    CompoundResult r = future.get();
    r.attempts = 1;
    return r;
}

void Session::start(const Compound& c, uint32_t minor, std::optional<SlotTable::Lease> lease,
                    std::function<void(CompoundResult&&)> done) {
    nfs_argop4 seq;
    std::memset(&seq, 0, sizeof(seq));
    std::string seq_label;
    if (lease) {
        seq.argop = NFS4_OP_SEQUENCE;
        SEQUENCE4args& s = seq.nfs_argop4_u.opsequence;
        std::memcpy(s.sa_sessionid, sessionid_, NFS4_SESSIONID_SIZE);
        s.sa_sequenceid = lease->seqid;
        s.sa_slotid = lease->slot;
        s.sa_highest_slotid = lease->highest_slotid;
        s.sa_cachethis = c.caches();
        seq_label =
            "SEQUENCE slot=" + std::to_string(lease->slot) + " seq=" + std::to_string(lease->seqid);
    }
    std::vector<char> args;
    try {
        args = c.encode(minor, lease ? &seq : nullptr);
    } catch (const XdrError& e) {
        if (lease) {
            slots_->release(lease->slot, SlotTable::Outcome::not_processed);
        }
        CompoundResult r;
        r.rpc_status = RpcStatus::bad_reply;
        r.error = std::string("request not sent: ") + e.what();
        r.ops_sent = c.size();
        done(std::move(r));
        return;
    }
    last_sent_ns_ = Clock::now().time_since_epoch().count();
    trace("-> COMPOUND v4." + std::to_string(minor) + (c.tag().empty() ? "" : " tag=" + c.tag()) +
          ": " + c.describe(seq_label));
    const std::size_t ops_sent = c.size();
    transport_->call_async(kNfsProgram, kNfsV4, kNfsProcCompound, options_.cred, args,
                           options_.timeout,
                           [this, lease, ops_sent, done = std::move(done)](RpcReply&& reply) {
                               CompoundResult r = finish_reply(ops_sent, lease, std::move(reply));
                               done(std::move(r));
                           });
}

CompoundResult Session::finish_reply(std::size_t ops_sent, std::optional<SlotTable::Lease> lease,
                                     RpcReply&& reply) {
    CompoundResult r;
    const auto elapsed = reply.elapsed;
    if (!reply.ok()) {
        r.rpc_status = reply.status;
        r.error = reply.detail;
    } else {
        r = decode_compound_reply(std::move(reply.record), reply.body_offset);
    }
    r.ops_sent = ops_sent;
    r.elapsed = elapsed;

    if (lease) {
        if (!r.ops.empty() && r.ops.front().opnum == NFS4_OP_SEQUENCE) {
            r.sequence = std::move(r.ops.front());
            r.ops.erase(r.ops.begin()); // OpResult owns nothing itself: no double free
        }
        SlotTable::Outcome outcome = SlotTable::Outcome::unknown;
        std::optional<uint32_t> target;
        if (r.sequence && r.sequence->status == NFS4_OK && r.sequence->typed) {
            const SEQUENCE4resok& ok =
                r.sequence->res.nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;
            outcome = SlotTable::Outcome::processed;
            target = ok.sr_target_highest_slotid;
            status_flags_ = ok.sr_status_flags;
        } else if (r.sequence || r.replied()) {
            outcome = SlotTable::Outcome::not_processed;
        } else if (r.rpc_status != RpcStatus::timed_out &&
                   r.rpc_status != RpcStatus::connection_lost &&
                   r.rpc_status != RpcStatus::closed && r.rpc_status != RpcStatus::bad_reply) {
            outcome = SlotTable::Outcome::not_processed; // an RPC-level refusal
        }
        slots_->release(lease->slot, outcome, target);
    }
    trace("<- " + r.describe() + " (" + std::to_string(r.elapsed.count()) + " us)");
    return r;
}

CompoundResult Session::bind_connection(channel_dir_from_client4 dir) {
    Compound c;
    c.no_sequence().bind_conn_to_session(sessionid_, dir);
    return send(c);
}

bool Session::close() {
    std::lock_guard lock(close_mu_);
    if (closed_ || !transport_) {
        return true;
    }
    closed_ = true;
    stop_renewer();
    if (!transport_->is_open()) {
        return false;
    }
    // Destroy only what open() established (it may have failed half-way).
    bool ok = true;
    if (have_session_) {
        Compound ds;
        ds.no_sequence().destroy_session(sessionid_);
        if (CompoundResult r = send(ds); !r.ok()) {
            trace("   DESTROY_SESSION: " + r.describe());
            ok = false;
        }
    }
    if (have_clientid_) {
        Compound dc;
        dc.no_sequence().destroy_clientid(clientid_);
        if (CompoundResult r = send(dc); !r.ok()) {
            trace("   DESTROY_CLIENTID: " + r.describe());
            ok = false;
        }
    }
    return ok;
}

void Session::set_callback_handler(CallbackOpHandler handler) {
    backchannel_.set_handler(std::move(handler));
}

} // namespace flexfiles::client
