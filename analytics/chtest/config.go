package chtest

import (
	"fmt"
	"log/slog"
	"path/filepath"
)

// ConfigXML returns a minimal server configuration that keeps everything
// under dir and listens on loopback only. The root element <yandex> is
// accepted by 18.16 and by current releases. deploy/clickhouse.xml.tmpl,
// the local development server's, has the same settings but three: the
// development server logs to files and has twice the mark cache and
// memory per query (test servers log warnings to the console and are
// sized for the small datasets of tests). TestConfigMatchesDeployTemplate
// keeps the rest the same.
func ConfigXML(dir string, tcpPort, httpPort int) string {
	p := func(sub string) string { return filepath.Join(dir, sub) + "/" }
	return fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <tcp_port>%d</tcp_port>
  <http_port>%d</http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>%s</path>
  <tmp_path>%s</tmp_path>
  <user_files_path>%s</user_files_path>
  <format_schema_path>%s</format_schema_path>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
  <quotas><default></default></quotas>
</yandex>
`, tcpPort, httpPort, p("data"), p("tmp"), p("user_files"), p("format_schemas"))
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
