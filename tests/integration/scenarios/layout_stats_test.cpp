// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTSTATS (RFC 7862 section 15.7) to the FLEXFILES MDS. A flex-files client reports
// I/O statistics per data file with it (RFC 8435 section 7: the body is an
// ff_layoutupdate4), at the interval the layout's ffl_stats_collect_hint suggests; the
// Linux client does. Stock Ganesha 4.3 decodes LAYOUTSTATS4args without lsa_deviceid and
// answers without the result's op number; the series' 0011 fixes both. These tests send
// the RFC's bytes and check the reply is a well-formed LAYOUTSTATS result and the
// compound carries on after it.
#include "client/flex_layout.hpp"
#include "layout_test_support.hpp"

using namespace flexfiles::layout_test;

namespace {

class LayoutStats : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        session_ = open_session();
        file_ = create_rw(*session_, "/ff/stats");
        layout_ = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
        ASSERT_EQ(layout_.mirrors.size(), 2u);
    }

    // What a client reports for the first mirror's data file after some I/O.
    FlexIoStats stats_of_first_mirror() const {
        const LayoutDs& entry = layout_.mirrors[0][0];
        FlexIoStats s;
        s.offset = 0;
        s.length = NFS4_UINT64_MAX;
        s.stateid = layout_.stateid;
        s.read_count = 3;
        s.read_bytes = 3 * 65536;
        s.write_count = 5000000000ull; // more than 32 bits: io_info4 counts are 64-bit
        s.write_bytes = 7 * 65536;
        std::memcpy(s.deviceid.data(), entry.deviceid.data(), entry.deviceid.size());
        s.uaddr = "127.0.0.1.8.1";
        s.fh.bytes.assign(entry.fh_vers[0].bytes.begin(), entry.fh_vers[0].bytes.end());
        s.write.ops_requested = 7;
        s.write.ops_completed = 7;
        s.write.bytes_requested = 7 * 65536;
        s.write.bytes_completed = 7 * 65536;
        s.write.total_busy_time = NfsTime{0, 4000000};
        s.duration = NfsTime{2, 0};
        return s;
    }

    std::unique_ptr<Session> session_;
    OpenFile file_;
    Layout layout_;
};

} // namespace

// PUTFH, LAYOUTSTATS, GETATTR: three results, the second numbered 65 with NFS4_OK, and the
// GETATTR after it decodes (the server consumed exactly the arguments the RFC defines).
TEST_F(LayoutStats, ReportIsAnsweredAndTheCompoundGoesOn) {
    Compound c;
    c.putfh(file_.fh).layoutstats(stats_of_first_mirror()).getattr(AttrMask{FATTR4_SIZE});
    CompoundResult r = session_->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    EXPECT_EQ(r.status, static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_EQ(r.ops.size(), 3u);
    EXPECT_EQ(r.ops[1].opnum, static_cast<std::uint32_t>(NFS4_OP_LAYOUTSTATS));
    EXPECT_EQ(r.ops[1].status, static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(r.attrs(2).size, std::optional<std::uint64_t>(0));
}

// One report per mirror in one compound, as a client with two mirrors sends them; the
// layout is still good afterwards (LAYOUTSTATS is not a return).
TEST_F(LayoutStats, OneReportPerMirrorInOneCompound) {
    FlexIoStats first = stats_of_first_mirror();
    FlexIoStats second = first;
    const LayoutDs& entry = layout_.mirrors[1][0];
    std::memcpy(second.deviceid.data(), entry.deviceid.data(), entry.deviceid.size());
    second.fh.bytes.assign(entry.fh_vers[0].bytes.begin(), entry.fh_vers[0].bytes.end());

    Compound c;
    c.putfh(file_.fh).layoutstats(first).layoutstats(second);
    CompoundResult r = session_->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    ASSERT_EQ(r.ops.size(), 3u);
    for (std::size_t i : {1u, 2u}) {
        EXPECT_EQ(r.ops[i].opnum, static_cast<std::uint32_t>(NFS4_OP_LAYOUTSTATS)) << "op " << i;
        EXPECT_EQ(r.ops[i].status, static_cast<std::uint32_t>(NFS4_OK)) << "op " << i;
    }
    EXPECT_EQ(layoutcommit(*session_, file_.fh, layout_.stateid, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4_OK));
}

// Arguments cut short (no lsa_layoutupdate): the COMPOUND cannot be decoded, which
// Ganesha answers at the RPC level with GARBAGE_ARGS; the session goes on serving.
TEST_F(LayoutStats, TruncatedArgumentsAreGarbageArgs) {
    std::vector<char> bytes = encode_layoutstats_args(stats_of_first_mirror());
    bytes.resize(8 + 8 + 16 + 16 + 16 + 16); // up to and with lsa_deviceid
    Compound c;
    c.putfh(file_.fh).raw(NFS4_OP_LAYOUTSTATS, bytes, "LAYOUTSTATS (truncated)");
    CompoundResult r = session_->send(c);
    EXPECT_EQ(r.rpc_status, RpcStatus::garbage_args) << r.error;

    Compound again;
    again.putfh(file_.fh).getattr(AttrMask{FATTR4_SIZE});
    EXPECT_TRUE(session_->send(again).ok());
}
