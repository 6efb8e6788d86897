# chef-request.rb: one request signed as Chef tooling signs it, with Debian's
# ruby-mixlib-authentication; prints {"status": N, "body_base64": "...", "api_version": "...",
# "content_type": "..."}.
#
#   ruby t/lib/chef-request.rb --url URL --ca CA --user NAME --key PEM --version 1.0|1.1|1.3
#        [--method GET] [--path /x] [--body TEXT | --body-file FILE] [--api-version N]
#        [--tamper method|path|body|timestamp|userid|authorization] [--clock-offset SECONDS]
#
# --tamper changes one part of the request after it was signed, as an attacker or a broken
# proxy would; --clock-offset signs with a timestamp that far from now.
#
#   ruby t/lib/chef-request.rb --serve
#
# reads requests, one JSON object a line ({"url", "ca", "user", "key", "version", "method",
# "path", "body_base64", "api_version", "tamper", "clock_offset"}: the options above), and
# answers each with its line as above: the tests (t/lib/PurserStack.pm) keep one such process
# instead of starting Ruby for every request.
require "openssl"
require "mixlib/authentication/signedheaderauth"
require "net/http"
require "json"
require "optparse"
require "time"
require "uri"

def chef_request(opts)
  key = OpenSSL::PKey::RSA.new(File.read(opts[:key]))
  algorithm = opts[:version] == "1.3" ? "sha256" : "sha1"
  extra = {}
  extra["X-Ops-Server-API-Version"] = opts[:api_version] if opts[:api_version]
  signing = Mixlib::Authentication::SignedHeaderAuth.signing_object(
    http_method: opts[:method].downcase.to_sym, path: opts[:path], body: opts[:body],
    timestamp: (Time.now.utc + opts[:offset]).iso8601, user_id: opts[:user],
    proto_version: opts[:version], headers: extra)
  headers = signing.sign(key, sign_algorithm: algorithm, sign_version: opts[:version])
  headers = headers.merge(extra)

  method, path, body = opts[:method], opts[:path], opts[:body]
  case opts[:tamper]
  when "method" then method = (method == "GET" ? "DELETE" : "GET")
  when "path" then path = path.sub(%r{/([^/]+)$}, "/x\\1")
  when "body" then body = body + " "
  when "timestamp" then headers["X-Ops-Timestamp"] = (Time.now.utc + 1).iso8601
  when "userid" then headers["X-Ops-Userid"] = "x" + headers["X-Ops-Userid"]
  when "authorization"
    line = headers["X-Ops-Authorization-2"].dup
    line[5] = line[5] == "A" ? "B" : "A"
    headers["X-Ops-Authorization-2"] = line
  end

  uri = URI(opts[:url] + path)
  http = Net::HTTP.new(uri.host, uri.port)
  http.use_ssl = true
  http.ca_file = opts[:ca]
  http.verify_mode = OpenSSL::SSL::VERIFY_PEER
  request = Net::HTTPGenericRequest.new(method, !body.empty?, true, uri.request_uri)
  headers.each { |k, v| request[k] = v }
  request["Accept"] = "application/json"
  request["Content-Type"] = "application/json" unless body.empty?
  request.body = body unless body.empty?
  response = http.request(request)
  # The body goes back base64-encoded: it may be binary (file downloads).
  JSON.generate("status" => response.code.to_i, "body_base64" => [response.body.to_s].pack("m0"),
                "api_version" => response["X-Ops-Server-API-Version"].to_s,
                "content_type" => response["Content-Type"].to_s)
end

DEFAULTS = { method: "GET", path: "/", body: "", version: "1.3", offset: 0 }.freeze

if ARGV == ["--serve"]
  $stdout.sync = true
  $stdin.each_line do |line|
    r = JSON.parse(line)
    opts = DEFAULTS.merge(url: r["url"], ca: r["ca"], user: r["user"], key: r["key"],
                          api_version: r["api_version"], tamper: r["tamper"])
    opts[:version] = r["version"] if r["version"]
    opts[:method] = r["method"].upcase if r["method"]
    opts[:path] = r["path"] if r["path"]
    opts[:body] = r["body_base64"].unpack1("m0") if r["body_base64"]
    opts[:offset] = Integer(r["clock_offset"]) if r["clock_offset"]
    answer = begin
      chef_request(opts)
    rescue StandardError => e
      JSON.generate("error" => "#{e.class}: #{e.message}")
    end
    puts answer
  end
  exit 0
end

opts = DEFAULTS.dup
OptionParser.new do |o|
  o.on("--url URL") { |v| opts[:url] = v }
  o.on("--ca FILE") { |v| opts[:ca] = v }
  o.on("--user NAME") { |v| opts[:user] = v }
  o.on("--key FILE") { |v| opts[:key] = v }
  o.on("--version V") { |v| opts[:version] = v }
  o.on("--method M") { |v| opts[:method] = v.upcase }
  o.on("--path P") { |v| opts[:path] = v }
  o.on("--body B") { |v| opts[:body] = v }
  o.on("--body-file F") { |v| opts[:body] = File.binread(v) }
  o.on("--api-version N") { |v| opts[:api_version] = v }
  o.on("--tamper WHAT") { |v| opts[:tamper] = v }
  o.on("--clock-offset S", Integer) { |v| opts[:offset] = v }
end.parse!
puts chef_request(opts)
