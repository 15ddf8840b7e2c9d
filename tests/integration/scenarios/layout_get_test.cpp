// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Flex-files layouts from the FLEXFILES MDS (RFC 8435), seen by a client: LAYOUTGET with
// Mirrors = 2, GETDEVICEINFO, GETDEVICELIST, NFSv3 I/O to both data servers with the
// layout's filehandles and synthetic credentials, LAYOUTCOMMIT, LAYOUTRETURN with an
// ff_layoutreturn4 body, and what the MDS refuses.
#include "layout_test_support.hpp"

#include <algorithm>
#include <set>

using namespace flexfiles::layout_test;

namespace {

class LayoutGet : public FlexfilesCluster {
protected:
    void SetUp() override {
        FlexfilesCluster::SetUp();
        session_ = open_session();
        file_ = create_rw(*session_, "/ff/data");
    }

    std::unique_ptr<Session> session_;
    OpenFile file_;
};

} // namespace

TEST_F(LayoutGet, RwLayoutNamesTwoMirrorsOnDistinctDevices) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);

    EXPECT_EQ(l.type, LAYOUT4_FLEX_FILES);
    EXPECT_EQ(l.iomode, LAYOUTIOMODE4_RW);
    EXPECT_EQ(l.offset, 0u);
    EXPECT_EQ(l.length, NFS4_UINT64_MAX) << "the whole file";
    EXPECT_TRUE(l.return_on_close);
    EXPECT_EQ(l.stripe_unit, 1u << 20) << "the default Stripe_Unit";
    EXPECT_EQ(l.flags, 0u) << "LAYOUTCOMMIT wanted, I/O through the MDS allowed";
    EXPECT_EQ(l.stats_collect_hint, 0u);
    ASSERT_EQ(l.mirrors.size(), 2u);

    std::set<std::string> devices;
    for (const auto& mirror : l.mirrors) {
        ASSERT_EQ(mirror.size(), 1u) << "one data server per mirror";
        const LayoutDs& ds = mirror[0];
        devices.insert(hex(ds.deviceid));
        EXPECT_EQ(ds.deviceid[0], 1) << "FSAL_ID_EXPERIMENTAL";
        EXPECT_EQ(ds.stateid.seqid, 0u);
        EXPECT_TRUE(std::all_of(std::begin(ds.stateid.other), std::end(ds.stateid.other),
                                [](char c) { return c == 0; }))
            << "the anonymous stateid";
        ASSERT_EQ(ds.fh_vers.size(), 1u);
        EXPECT_FALSE(ds.fh_vers[0].empty());
        const Nfs3Credentials creds = ds.creds();
        EXPECT_GE(creds.uid, kFencingMin);
        EXPECT_LE(creds.uid, kFencingMax);
        EXPECT_GE(creds.gid, kFencingMin);
        EXPECT_LE(creds.gid, kFencingMax);
        EXPECT_EQ(ds.user, std::to_string(creds.uid)) << "a plain numeric owner string";
    }
    EXPECT_EQ(devices.size(), 2u) << "the two mirrors are on distinct data servers";

    // Another client's READ layout of the same file names the same data files, with
    // another uid and the same gid (it reads through the group bits, hostile_authority_test).
    auto reader = open_session();
    const OpenFile theirs = open_path(*reader, "/ff/data", {});
    const Layout r = must_layoutget(*reader, theirs.fh, theirs.stateid, LAYOUTIOMODE4_READ);
    EXPECT_EQ(r.iomode, LAYOUTIOMODE4_READ);
    ASSERT_EQ(r.mirrors.size(), 2u);
    for (std::size_t m = 0; m < 2; m++) {
        EXPECT_EQ(r.mirrors[m][0].deviceid, l.mirrors[m][0].deviceid);
        EXPECT_EQ(r.mirrors[m][0].fh_vers[0], l.mirrors[m][0].fh_vers[0]);
        EXPECT_NE(r.mirrors[m][0].user, l.mirrors[m][0].user);
        EXPECT_EQ(r.mirrors[m][0].group, l.mirrors[m][0].group);
    }
    EXPECT_NE(std::memcmp(r.stateid.other, l.stateid.other, sizeof(l.stateid.other)), 0)
        << "one layout stateid per client and file";
}

// A second LAYOUTGET on the layout stateid (what clients send once they hold a layout of
// the file) makes stock Ganesha 4.3 free the layout state under its table (a reference
// dropped twice in acquire_layout_state; the next use of the stateid aborts the server).
// The series fixes it (protocols/patches/0007-layoutget-layout-stateid-double-unref.patch);
// this test keeps it fixed.
TEST_F(LayoutGet, SecondLayoutgetOnTheLayoutStateid) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    const Layout r = must_layoutget(*session_, file_.fh, l.stateid, LAYOUTIOMODE4_READ);
    EXPECT_EQ(r.iomode, LAYOUTIOMODE4_READ);
    EXPECT_EQ(std::memcmp(r.stateid.other, l.stateid.other, sizeof(l.stateid.other)), 0);
    EXPECT_EQ(r.stateid.seqid, l.stateid.seqid + 1);
    // The state is still alive: it can be used again, then returned.
    EXPECT_EQ(layoutcommit(*session_, file_.fh, r.stateid, 0).status,
              std::optional<std::uint32_t>(NFS4_OK));
    const Layout again = must_layoutget(*session_, file_.fh, r.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(layoutreturn(*session_, file_.fh, again.stateid).status,
              std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}

TEST_F(LayoutGet, GetDeviceInfoGivesTheDataServersAddressAndPort) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    std::set<unsigned> seen;
    for (const auto& mirror : l.mirrors) {
        const DeviceInfoResult info = getdeviceinfo(*session_, mirror[0].deviceid);
        ASSERT_EQ(info.status, std::optional<std::uint32_t>(NFS4_OK));
        ASSERT_TRUE(info.addr.has_value()) << "ff_device_addr4 does not decode";
        EXPECT_EQ(info.type, LAYOUT4_FLEX_FILES);
        ASSERT_EQ(info.addr->netaddrs.size(), 1u);
        EXPECT_EQ(info.addr->netaddrs[0].first, "tcp");
        const DataServerInfo* ds = ds_at(info.addr->netaddrs[0].second);
        ASSERT_NE(ds, nullptr) << info.addr->netaddrs[0].second
                               << " is none of the cluster's data servers";
        seen.insert(ds->index);
        // the device id's last 8 bytes are the Data_Server Id (index + 1 in the harness)
        EXPECT_EQ(mirror[0].deviceid[15], ds->index + 1);
        ASSERT_EQ(info.addr->versions.size(), 1u);
        EXPECT_EQ(info.addr->versions[0].version, 3u);
        EXPECT_EQ(info.addr->versions[0].minor, 0u);
        EXPECT_EQ(info.addr->versions[0].rsize, 1u << 20);
        EXPECT_EQ(info.addr->versions[0].wsize, 1u << 20);
        EXPECT_FALSE(info.addr->versions[0].tightly_coupled);
    }
    EXPECT_EQ(seen.size(), 2u);
}

TEST_F(LayoutGet, WritesThroughTheLayoutReachBothMirrors) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    const auto data = pattern(100000, 3);

    for (const auto& mirror : l.mirrors) {
        const DataServerInfo* info = ds_of(*session_, mirror[0]);
        ASSERT_NE(info, nullptr);
        Nfs3Client ds(info->nfs3_url(), mirror[0].creds());
        const Nfs3WriteResult w = ds.write(mirror[0].fh_vers[0], 0, data);
        ASSERT_EQ(w.status, Nfs3Status::ok) << "ds" << info->index + 1;
        EXPECT_EQ(w.count, data.size());
        ASSERT_TRUE(w.file_wcc.after.has_value());
        EXPECT_EQ(w.file_wcc.after->uid, mirror[0].creds().uid)
            << "the data file belongs to the layout's synthetic owner";
        EXPECT_EQ(w.file_wcc.after->size, data.size());

        // Anybody else is refused: the owner is what fences.
        Nfs3Client stranger(info->nfs3_url(), {mirror[0].creds().uid + 1, 4242});
        EXPECT_EQ(stranger.write(mirror[0].fh_vers[0], 0, data).status, Nfs3Status::acces);
    }
    // Both mirrors hold the bytes.
    for (const auto& mirror : l.mirrors) {
        const DataServerInfo* info = ds_of(*session_, mirror[0]);
        ASSERT_NE(info, nullptr);
        Nfs3Client ds(info->nfs3_url(), mirror[0].creds());
        std::vector<std::uint8_t> back;
        while (back.size() < data.size()) {
            const Nfs3ReadResult r = ds.read(mirror[0].fh_vers[0], back.size(), 65536);
            ASSERT_EQ(r.status, Nfs3Status::ok);
            ASSERT_FALSE(r.data.empty());
            back.insert(back.end(), r.data.begin(), r.data.end());
        }
        EXPECT_EQ(back, data) << "ds" << info->index + 1;
    }
}

TEST_F(LayoutGet, LayoutCommitGivesTheFileItsNewSize) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    const auto data = pattern(12345, 9);
    for (const auto& mirror : l.mirrors) {
        const DataServerInfo* info = ds_of(*session_, mirror[0]);
        ASSERT_NE(info, nullptr);
        Nfs3Client ds(info->nfs3_url(), mirror[0].creds());
        ASSERT_EQ(ds.write(mirror[0].fh_vers[0], 0, data).status, Nfs3Status::ok);
    }
    const nfstime4 mtime{1700000000, 5};
    const CommitResult c = layoutcommit(*session_, file_.fh, l.stateid, data.size() - 1, mtime);
    ASSERT_EQ(c.status, std::optional<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(c.new_size.has_value()) << "the size moved, the answer says so";
    EXPECT_EQ(*c.new_size, data.size());

    // A commit that does not grow the file does not change the size.
    const CommitResult again = layoutcommit(*session_, file_.fh, l.stateid, 99);
    ASSERT_EQ(again.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_FALSE(again.new_size.has_value());

    // GETATTR through the MDS reports it.
    const StatResult st = stat_path(*session_, "/ff/data");
    ASSERT_TRUE(st.attrs.size.has_value());
    EXPECT_EQ(*st.attrs.size, data.size());
}

// The Linux client sends loca_last_write_offset = 2^64-1 when it knows no last write
// (pnfs_layoutcommit_inode with plh_lwb == 0): that says nothing of the size, and must not
// make the file 2^64-1 bytes long.
TEST_F(LayoutGet, LayoutCommitWithTheLargestOffsetLeavesTheSize) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(layoutcommit(*session_, file_.fh, l.stateid, 4095).status,
              std::optional<std::uint32_t>(NFS4_OK));
    const CommitResult c = layoutcommit(*session_, file_.fh, l.stateid, NFS4_UINT64_MAX);
    ASSERT_EQ(c.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_FALSE(c.new_size.has_value()) << *c.new_size;
    const StatResult st = stat_path(*session_, "/ff/data");
    ASSERT_TRUE(st.attrs.size.has_value());
    EXPECT_EQ(*st.attrs.size, 4096u);
}

TEST_F(LayoutGet, LayoutReturnTakesAnErrorAndStatsReport) {
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    const DeviceId dev0 = l.mirrors[0][0].deviceid;
    const DeviceId dev1 = l.mirrors[1][0].deviceid;

    // A body that is not an ff_layoutreturn4: refused, the layout stays.
    const std::vector<char> garbage{0, 0, 0, 5, 1, 2};
    EXPECT_EQ(layoutreturn(*session_, file_.fh, l.stateid, garbage).status,
              std::optional<std::uint32_t>(NFS4ERR_BADXDR));
    EXPECT_EQ(layoutcommit(*session_, file_.fh, l.stateid, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4_OK))
        << "the refused return left the layout in place";

    const std::size_t mark = cluster_->mds().log_offset();
    const auto body = ff_layoutreturn_body({{dev0, NFS4ERR_NXIO}}, {{dev1, 4096}});
    const ReturnResult r = layoutreturn(*session_, file_.fh, l.stateid, body);
    ASSERT_EQ(r.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_FALSE(r.stateid_present) << "every segment returned: the layout state is gone";
    // The layout stateid names nothing any more: no layout to commit through.
    EXPECT_EQ(layoutcommit(*session_, file_.fh, l.stateid, std::nullopt).status,
              std::optional<std::uint32_t>(NFS4ERR_BADLAYOUT));

    // The WRITE that failed on mirror 0 may have reached mirror 1: mirror 0 is stale until
    // the resilverer has copied mirror 1 over it (no RW layout is out any more).
    EXPECT_TRUE(cluster_->mds().log_contains("mirror 0 (data file ", mark));
    EXPECT_TRUE(cluster_->mds().log_contains("missed a client's write (LAYOUTRETURN", mark));
    EXPECT_TRUE(eventually([&] { return cluster_->mds().log_contains("in sync again", mark); },
                           std::chrono::seconds(15)));

    // A new layout is granted afterwards, with a new stateid and both mirrors.
    const Layout again = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    EXPECT_EQ(again.mirrors.size(), 2u);
}

TEST_F(LayoutGet, RefusesOtherLayoutTypesUnknownDevicesAndDeviceLists) {
    const LayoutGetResult files =
        layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW, LAYOUT4_NFSV4_1_FILES);
    EXPECT_EQ(files.status, std::optional<std::uint32_t>(NFS4ERR_UNKNOWN_LAYOUTTYPE));

    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    DeviceId unknown = l.mirrors[0][0].deviceid;
    unknown[15] = 99; // Data_Server Id 99: not configured
    EXPECT_EQ(getdeviceinfo(*session_, unknown).status,
              std::optional<std::uint32_t>(NFS4ERR_NOENT));
    DeviceId foreign = l.mirrors[0][0].deviceid;
    foreign[2] = 'X'; // not the FLEXFILES format
    EXPECT_EQ(getdeviceinfo(*session_, foreign).status,
              std::optional<std::uint32_t>(NFS4ERR_NOENT));
    EXPECT_EQ(getdeviceinfo(*session_, l.mirrors[0][0].deviceid, LAYOUT4_NFSV4_1_FILES).status,
              std::optional<std::uint32_t>(NFS4ERR_UNKNOWN_LAYOUTTYPE));

    // GETDEVICELIST: flex-files devices only, room for at least one, and a cookie only
    // with the verifier it came with.
    auto devicelist = [&](layouttype4 type, std::uint32_t maxdevices, std::uint64_t cookie) {
        Compound c;
        c.putfh(file_.fh).getdevicelist(type, maxdevices, cookie,
                                        {'n', 'o', 't', 'o', 'u', 'r', 's'});
        CompoundResult r = session_->send(c);
        EXPECT_TRUE(r.replied()) << r.error;
        return r.status_of(1);
    };
    EXPECT_EQ(devicelist(LAYOUT4_NFSV4_1_FILES, 16, 0),
              std::optional<std::uint32_t>(NFS4ERR_UNKNOWN_LAYOUTTYPE));
    EXPECT_EQ(devicelist(LAYOUT4_FLEX_FILES, 0, 0), std::optional<std::uint32_t>(NFS4ERR_INVAL));
    EXPECT_EQ(devicelist(LAYOUT4_FLEX_FILES, 16, 2),
              std::optional<std::uint32_t>(NFS4ERR_NOT_SAME));

    EXPECT_TRUE(cluster_->mds().error_lines().empty());
}

namespace {

struct DeviceListPage {
    std::optional<std::uint32_t> status;
    std::vector<DeviceId> devices;
    std::uint64_t cookie = 0;
    std::array<char, NFS4_VERIFIER_SIZE> verifier{};
    bool eof = false;
};

DeviceListPage getdevicelist(Session& s, const FileHandle& fh, std::uint32_t maxdevices,
                             std::uint64_t cookie = 0,
                             const std::array<char, NFS4_VERIFIER_SIZE>& verifier = {}) {
    Compound c;
    c.putfh(fh).getdevicelist(LAYOUT4_FLEX_FILES, maxdevices, cookie, verifier);
    CompoundResult r = s.send(c);
    DeviceListPage page;
    EXPECT_TRUE(r.replied()) << r.error;
    page.status = r.status_of(1);
    if (page.status != NFS4_OK)
        return page;
    const GETDEVICELIST4resok& ok = r.getdevicelist(1);
    for (u_int i = 0; i < ok.gdlr_deviceid_list.gdlr_deviceid_list_len; i++) {
        DeviceId d;
        std::memcpy(d.data(), ok.gdlr_deviceid_list.gdlr_deviceid_list_val[i], d.size());
        page.devices.push_back(d);
    }
    page.cookie = ok.gdlr_cookie;
    std::memcpy(page.verifier.data(), ok.gdlr_cookieverf, page.verifier.size());
    page.eof = ok.gdlr_eof;
    return page;
}

// The deviceid layouts carry for Data_Server Id `id` (model/deviceid.hpp).
DeviceId flexfiles_deviceid(std::uint8_t id) {
    return DeviceId{1, 1, 'F', 'F', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, id};
}

} // namespace

// GETDEVICELIST names exactly the three data servers, with the deviceids layouts carry,
// and GETDEVICEINFO resolves each to its data server.
TEST_F(LayoutGet, GetDeviceListListsTheDataServersGetDeviceInfoResolves) {
    const DeviceListPage page = getdevicelist(*session_, file_.fh, 16);
    ASSERT_EQ(page.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_TRUE(page.eof);
    ASSERT_EQ(page.devices.size(), 3u);
    std::set<unsigned> seen;
    for (std::size_t i = 0; i < page.devices.size(); i++) {
        EXPECT_EQ(hex(page.devices[i]), hex(flexfiles_deviceid(static_cast<std::uint8_t>(i + 1))))
            << "ordered by Data_Server Id";
        const DeviceInfoResult info = getdeviceinfo(*session_, page.devices[i]);
        ASSERT_EQ(info.status, std::optional<std::uint32_t>(NFS4_OK)) << hex(page.devices[i]);
        ASSERT_TRUE(info.addr.has_value());
        ASSERT_EQ(info.addr->netaddrs.size(), 1u);
        const DataServerInfo* ds = ds_at(info.addr->netaddrs[0].second);
        ASSERT_NE(ds, nullptr) << info.addr->netaddrs[0].second;
        EXPECT_EQ(ds->index, i);
        seen.insert(ds->index);
    }
    EXPECT_EQ(seen.size(), 3u);

    // The layout's devices are among them, byte for byte.
    const Layout l = must_layoutget(*session_, file_.fh, file_.stateid, LAYOUTIOMODE4_RW);
    for (const auto& mirror : l.mirrors)
        EXPECT_NE(std::find(page.devices.begin(), page.devices.end(), mirror[0].deviceid),
                  page.devices.end())
            << hex(mirror[0].deviceid);
}

// gdla_maxdevices 2: two pages, continued with the cookie and verifier of the first.
TEST_F(LayoutGet, GetDeviceListPagesWithTheCookie) {
    const DeviceListPage first = getdevicelist(*session_, file_.fh, 2);
    ASSERT_EQ(first.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_FALSE(first.eof);
    ASSERT_EQ(first.devices.size(), 2u);
    EXPECT_NE(first.cookie, 0u);

    const DeviceListPage second =
        getdevicelist(*session_, file_.fh, 2, first.cookie, first.verifier);
    ASSERT_EQ(second.status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_TRUE(second.eof);
    ASSERT_EQ(second.devices.size(), 1u);
    EXPECT_EQ(second.verifier, first.verifier);

    std::vector<DeviceId> all = first.devices;
    all.push_back(second.devices[0]);
    for (std::size_t i = 0; i < all.size(); i++)
        EXPECT_EQ(hex(all[i]), hex(flexfiles_deviceid(static_cast<std::uint8_t>(i + 1))));
}
