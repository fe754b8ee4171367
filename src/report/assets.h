/* The pages' stylesheets and script, kept as files in src/report/assets/ and
 * compiled in as strings (cmake/embed.cmake writes each array at build time):
 * a page carries them inline and nothing is read at run time. */
#ifndef CCLFORGE_REPORT_ASSETS_H
#define CCLFORGE_REPORT_ASSETS_H

/* every page (cf_html_begin) */
extern const char cf_report_frame_css[];
/* the smoke matrix (smoke_page.c): its styles, and the script that switches the test size */
extern const char cf_report_smoke_css[];
extern const char cf_report_smoke_js[];
/* the gather's hosts (hosts_page.c) */
extern const char cf_report_hosts_css[];
/* one host's topology (topology_page.c) */
extern const char cf_report_topology_css[];

/* the hang page (hang_page.c) */
extern const char cf_report_hang_css[];

#endif
