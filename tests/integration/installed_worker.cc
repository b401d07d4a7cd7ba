// A route worker in C++, built by test_pkgconfig.sh against the installed
// tree only (c++ file.cc $(pkg-config --cflags --libs shmr)): <shmr/shmr.h>
// is C with extern "C", and a C++ program uses it as it is.  It answers a
// call with "<route>@<shmr_version()>:<payload>", so the caller sees which
// library the worker runs with; it refuses to start when that is not the
// version its header says.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <shmr/shmr.h>

int main()
{
	const std::string version = shmr_version();
	if (version != SHMR_VERSION_TEXT) {
		std::fprintf(stderr, "installed-worker: libshmr %s, header %s\n",
			     version.c_str(), SHMR_VERSION_TEXT);
		return 1;
	}
	const char *route = std::getenv("SHMR_ROUTE");
	const std::string tag = std::string(route ? route : "c++") + "@" +
				version + ":";

	shmr_domain *d = nullptr;
	shmr_endpoint *ep = nullptr;
	int rc = shmr_attach_env(&d, &ep);
	if (rc < 0) {
		std::fprintf(stderr, "installed-worker: %s\n", shmr_strerror(rc));
		return 1;
	}
	while (!shmr_stopping()) {
		const shmr_msg *msgs[16];
		int n = shmr_recv_burst(ep, msgs, 16, 1000);
		if (n == -EINTR)
			break;
		for (int i = 0; i < n; i++) {
			if (msgs[i]->kind != SHMR_KIND_CALL)
				continue;
			std::string out = tag;
			out.append(reinterpret_cast<const char *>(msgs[i]->data),
				   msgs[i]->len);
			if (out.size() > shmr_payload_max(d))
				out.resize(shmr_payload_max(d));
			while (shmr_reply(ep, msgs[i], 0, out.data(), out.size()) ==
			       -EAGAIN)
				;
		}
	}
	shmr_endpoint_close(ep);
	shmr_detach(d);
	return 0;
}
