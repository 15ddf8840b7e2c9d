// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUTERROR (RFC 7862 section 15.6) to the FLEXFILES MDS: the series' 0009 decodes
// lea_errors<> as an array, answers, checks the layout stateid and hands each device_error4
// to the FSAL, which treats it like an ff_ioerr4 of LAYOUTRETURN (pnfs/layouterror.cpp):
// NXIO makes the MDS probe the data server (the probe, not the report, decides its
// health), ACCESS with the
// layout's current owner sets the data file's owner back, an unknown device is ignored.
#include "layout_test_support.hpp"

#include <initializer_list>
#include <sstream>

using namespace flexfiles::layout_test;

namespace {

DeviceError device_error(const DeviceId& dev, nfsstat4 status, nfs_opnum4 op = NFS4_OP_WRITE) {
    DeviceError e;
    std::memcpy(e.deviceid.data(), dev.data(), dev.size());
    e.status = status;
    e.opnum = op;
    return e;
}

class LayoutError : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        session_ = open_session();
        file_ = create_rw(*session_, "/ff/data");
        layout_ = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
        ASSERT_EQ(layout_.mirrors.size(), 2u);
        ASSERT_TRUE(cluster_->mds().log_contains("3 of 3 data server(s) Up"))
            << "every data server must be Up before a test reports one";
    }

    // PUTFH, LAYOUTERROR of the whole file; the LAYOUTERROR's status (empty: no reply).
    std::optional<std::uint32_t> layouterror(const stateid4& stateid,
                                             const std::vector<DeviceError>& errors) {
        Compound c;
        c.putfh(file_.fh).layouterror(0, NFS4_UINT64_MAX, stateid, errors);
        CompoundResult r = session_->send(c);
        EXPECT_TRUE(r.replied()) << r.error;
        return r.status_of(1);
    }

    // Whether one MDS log line after `mark` holds every fragment.
    bool mds_logged(std::size_t mark, std::initializer_list<std::string> fragments) const {
        const std::string log = cluster_->mds().log_text();
        std::istringstream in(log.substr(std::min(mark, log.size())));
        for (std::string line; std::getline(in, line);) {
            bool all = true;
            for (const std::string& f : fragments)
                all = all && line.find(f) != std::string::npos;
            if (all)
                return true;
        }
        return false;
    }

    // The data server a layout entry names and its configured Id (index + 1 here).
    const DataServerInfo& ds_info_of(const LayoutDs& entry) {
        const DataServerInfo* info = ds_of(*session_, entry);
        if (info == nullptr)
            throw std::runtime_error("GETDEVICEINFO named none of the cluster's data servers");
        return *info;
    }
    static std::string ds_label(const DataServerInfo& info) {
        return "ds " + std::to_string(info.index + 1) + " (";
    }

    std::unique_ptr<Session> session_;
    OpenFile file_;
    Layout layout_;
};

const std::optional<std::uint32_t> kOk{NFS4_OK};
const std::optional<std::uint32_t> kBadStateid{NFS4ERR_BAD_STATEID};

} // namespace

// NFS4ERR_NXIO: the MDS probes the data server at once (logged); it answers, so it stays
// Up: a client's report alone never changes a data server's health. The other mirror's
// data server is left alone.
TEST_F(LayoutError, NxioProbesTheDataServer) {
    const DataServerInfo& named = ds_info_of(layout_.mirrors[0][0]);
    const DataServerInfo& other = ds_info_of(layout_.mirrors[1][0]);
    const std::size_t mark = cluster_->mds().log_offset();

    EXPECT_EQ(
        layouterror(layout_.stateid, {device_error(layout_.mirrors[0][0].deviceid, NFS4ERR_NXIO)}),
        kOk);

    EXPECT_TRUE(mds_logged(mark, {"LAYOUTERROR", ds_label(named), "probing it now"}))
        << "no probe of " << named.name << " in the MDS log";
    EXPECT_FALSE(mds_logged(mark, {ds_label(other), "probing it now"}));
    std::this_thread::sleep_for(std::chrono::seconds(1)); // the probe's answer
    EXPECT_FALSE(mds_logged(mark, {"-> Suspect"})) << "a client's report changed health";
    // The layout was not returned by it.
    EXPECT_EQ(layoutcommit(*session_, file_.fh, layout_.stateid, std::nullopt).status, kOk);
}

// A WRITE the client could not make on one mirror may have reached the other: that mirror
// is marked stale (left out of new layouts), never the last one in sync, and once the RW
// layout is returned the resilverer copies the other mirror over it.
TEST_F(LayoutError, AFailedWriteMarksTheMirrorStaleUntilResilvered) {
    const std::size_t mark = cluster_->mds().log_offset();
    EXPECT_EQ(
        layouterror(layout_.stateid, {device_error(layout_.mirrors[0][0].deviceid, NFS4ERR_NXIO)}),
        kOk);
    EXPECT_TRUE(mds_logged(mark, {"mirror 0", "missed a client's write", "marked stale"}));
    EXPECT_EQ(
        layouterror(layout_.stateid, {device_error(layout_.mirrors[1][0].deviceid, NFS4ERR_IO)}),
        kOk);
    EXPECT_TRUE(mds_logged(mark, {"mirror 1 not marked stale", "no in-sync mirror"}));
    // A READ error says nothing about the mirrors' contents.
    EXPECT_EQ(layouterror(layout_.stateid,
                          {device_error(layout_.mirrors[1][0].deviceid, NFS4ERR_IO, NFS4_OP_READ)}),
              kOk);

    auto reader = open_session();
    OpenFile theirs = open_path(*reader, "/ff/data", {});
    const Layout r = must_layoutget(*reader, theirs.fh, theirs.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(r.mirrors.size(), 1u) << "the stale mirror is left out";
    EXPECT_EQ(r.mirrors[0][0].deviceid, layout_.mirrors[1][0].deviceid);
    close_file(*reader, theirs);
    EXPECT_FALSE(mds_logged(mark, {"in sync again"})) << "resilvered under an RW layout";

    close_file(*session_, file_); // return-on-close: the RW layout goes
    EXPECT_TRUE(eventually(
        [&] {
            return mds_logged(mark, {"mirror 0", "in sync again"});
        },
        std::chrono::seconds(15)));
}

// NFS4ERR_ACCESS while the layout carries the file's current synthetic owner: the data
// file's owner was changed behind the MDS's back, and the MDS sets it back (NFSv3 SETATTR),
// which NFSv3 GETATTR on the data server shows.
TEST_F(LayoutError, AccessRepairsTheDataFileOwner) {
    const LayoutDs& entry = layout_.mirrors[0][0];
    const DataServerInfo& info = ds_info_of(entry);
    Nfs3Client root(info.nfs3_url());
    Nfs3SetAttrs chown;
    chown.uid = 4242;
    chown.gid = 4343;
    ASSERT_EQ(root.setattr(entry.fh_vers[0], chown).status, Nfs3Status::ok);
    ASSERT_EQ(root.getattr(entry.fh_vers[0]).attr.uid, 4242u);

    EXPECT_EQ(layouterror(layout_.stateid, {device_error(entry.deviceid, NFS4ERR_ACCESS)}), kOk);

    const Nfs3Credentials expected = entry.creds();
    Nfs3GetattrResult a;
    EXPECT_TRUE(eventually(
        [&] {
            a = root.getattr(entry.fh_vers[0]);
            return a.status == Nfs3Status::ok && a.attr.uid == expected.uid &&
                   a.attr.gid == expected.gid;
        },
        std::chrono::seconds(5)))
        << "owner still " << a.attr.uid << ":" << a.attr.gid << ", expected " << expected.uid << ":"
        << expected.gid;
    // The layout's credentials write again.
    Nfs3Client as_layout(info.nfs3_url(), expected);
    EXPECT_EQ(as_layout.write(entry.fh_vers[0], 0, pattern(10, 1)).status, Nfs3Status::ok);
    // The other mirror's data file was not touched.
    const LayoutDs& other = layout_.mirrors[1][0];
    Nfs3Client other_root(ds_info_of(other).nfs3_url());
    EXPECT_EQ(other_root.getattr(other.fh_vers[0]).attr.uid, other.creds().uid);
}

// lea_stateid must be the caller's layout stateid of the file, with a seqid the server has
// reached (checked by Ganesha before the FSAL hears of it, so nothing is reported to the
// fleet).
TEST_F(LayoutError, BadStateidsAreRefused) {
    const std::vector<DeviceError> nxio{device_error(layout_.mirrors[0][0].deviceid, NFS4ERR_NXIO)};
    const std::size_t mark = cluster_->mds().log_offset();

    EXPECT_EQ(layouterror(file_.stateid, nxio), kBadStateid) << "an open stateid";
    stateid4 forged = layout_.stateid;
    forged.other[11] ^= 0x5a; // the state counter; the clientid part stays the caller's
    EXPECT_EQ(layouterror(forged, nxio), kBadStateid) << "a stateid the server never gave";

    auto other_client = open_session();
    const OpenFile theirs = open_path(*other_client, "/ff/data", {});
    const Layout their_layout =
        must_layoutget(*other_client, theirs.fh, theirs.stateid, LAYOUTIOMODE4_READ);
    EXPECT_EQ(layouterror(their_layout.stateid, nxio), kBadStateid) << "another client's layout";

    // A seqid the server never reached.
    stateid4 future = layout_.stateid;
    future.seqid += 1;
    EXPECT_EQ(layouterror(future, nxio), kBadStateid) << "a seqid newer than the server's";

    EXPECT_FALSE(mds_logged(mark, {"probing it now"})) << "a refused LAYOUTERROR reported a server";

    // An older seqid of the caller's own layout is accepted (patch 0012): LAYOUTERROR changes
    // no layout state, and the Linux client would re-send OLD_STATEID's seqid for ever.
    const Layout again = must_layoutget(*session_, file_.fh, layout_.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(again.stateid.seqid, layout_.stateid.seqid + 1);
    EXPECT_EQ(layouterror(layout_.stateid, nxio), std::optional<std::uint32_t>(NFS4_OK));
}

// Ganesha 4.3 never set LAYOUTERROR's result op number, so its reply was unusable. Now
// every op of the compound is answered, also after LAYOUTERROR, also with an empty
// lea_errors, and also when the data server it names is down (nothing waits for it).
TEST_F(LayoutError, AReplyAlwaysComesBack) {
    const DeviceId dev0 = layout_.mirrors[0][0].deviceid;
    const DeviceId dev1 = layout_.mirrors[1][0].deviceid;
    {
        Compound c;
        c.putfh(file_.fh)
            .layouterror(
                0, 4096, layout_.stateid,
                {device_error(dev0, NFS4ERR_NXIO, NFS4_OP_READ), device_error(dev1, NFS4ERR_IO)})
            .getattr(AttrMask{FATTR4_SIZE});
        const CompoundResult r = session_->send(c);
        ASSERT_TRUE(r.replied()) << r.error;
        ASSERT_EQ(r.ops.size(), 3u) << r.describe();
        EXPECT_EQ(r.status_of(1), kOk);
        EXPECT_EQ(r.status_of(2), kOk);
    }
    EXPECT_EQ(layouterror(layout_.stateid, {}), kOk) << "no device_error4 at all";

    const DataServerInfo& down = ds_info_of(layout_.mirrors[0][0]);
    cluster_->ds(down.index).stop();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(layouterror(layout_.stateid,
                          {device_error(dev0, NFS4ERR_ACCESS), device_error(dev0, NFS4ERR_NXIO)}),
              kOk);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2))
        << "LAYOUTERROR waited for the stopped data server";
}

// A device that is none of the export's data servers (an unconfigured Id, another format)
// is counted and ignored: NFS4_OK, and the errors after it are still handled.
TEST_F(LayoutError, UnknownDevicesAreIgnored) {
    DeviceId unconfigured = layout_.mirrors[0][0].deviceid;
    unconfigured[15] = 99;
    DeviceId foreign = layout_.mirrors[0][0].deviceid;
    foreign[2] = 'X';
    const DataServerInfo& named = ds_info_of(layout_.mirrors[1][0]);
    const std::size_t mark = cluster_->mds().log_offset();

    EXPECT_EQ(
        layouterror(layout_.stateid, {device_error(unconfigured, NFS4ERR_NXIO),
                                      device_error(foreign, NFS4ERR_ACCESS),
                                      device_error(layout_.mirrors[1][0].deviceid, NFS4ERR_NXIO)}),
        kOk);

    EXPECT_TRUE(mds_logged(mark, {"LAYOUTERROR", hex(unconfigured),
                                  "none of this export's data servers: ignored (1 so far)"}));
    EXPECT_TRUE(mds_logged(mark, {"LAYOUTERROR", hex(foreign), "ignored (2 so far)"}));
    EXPECT_TRUE(mds_logged(mark, {ds_label(named), "probing it now"}))
        << "the known device after the unknown ones was not handled";
    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}
