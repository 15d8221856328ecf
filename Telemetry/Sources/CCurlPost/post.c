#include "CCurlPost.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

int bg_post_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

/// The collector's response body is not needed (a partial success is not reported): read and
/// dropped.
static size_t discard(char *data, size_t size, size_t count, void *context) {
  (void)data;
  (void)context;
  return size * count;
}

#define SET(option, value)                                                                    \
  do {                                                                                        \
    CURLcode set_result = curl_easy_setopt(curl, option, value);                              \
    if (set_result != CURLE_OK) {                                                             \
      result = set_result;                                                                    \
      goto done;                                                                              \
    }                                                                                         \
  } while (0)

int bg_post(const struct bg_post_request *request, struct bg_post_response *response) {
  response->status = 0;
  response->retry_after = -1;
  response->error[0] = 0;
  char error[CURL_ERROR_SIZE] = {0};
  CURLcode result = CURLE_OK;
  struct curl_slist *headers = NULL;
  CURL *curl = curl_easy_init();
  if (curl == NULL) {
    response->curl_code = CURLE_FAILED_INIT;
    snprintf(response->error, sizeof response->error, "cannot initialise libcurl");
    return response->curl_code;
  }
  // No `Expect: 100-continue` round trip.
  const char *fixed[] = {"Content-Type: application/x-protobuf", "Expect:"};
  for (size_t index = 0; index < 2 + request->header_count; index++) {
    const char *line = index < 2 ? fixed[index] : request->headers[index - 2];
    struct curl_slist *grown = curl_slist_append(headers, line);
    if (grown == NULL) {
      result = CURLE_OUT_OF_MEMORY;
      goto done;
    }
    headers = grown;
  }
  SET(CURLOPT_ERRORBUFFER, error);
  SET(CURLOPT_URL, request->url);
  // Only the endpoint's own scheme, and no redirect at all: a 3xx is a failure (issue #40,
  // finding 11: a redirect must not carry the headers to another origin or to plain http).
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the _STR options (the bitmasks are deprecated)
  SET(CURLOPT_PROTOCOLS_STR, request->protocol);
  SET(CURLOPT_REDIR_PROTOCOLS_STR, "https");
#else
  SET(CURLOPT_PROTOCOLS,
    (long)(strcmp(request->protocol, "https") == 0 ? CURLPROTO_HTTPS : CURLPROTO_HTTP));
  SET(CURLOPT_REDIR_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
  SET(CURLOPT_FOLLOWLOCATION, 0L);
  // Verification stays on (libcurl's default, said again): a private CA comes from `ca-file`.
  SET(CURLOPT_SSL_VERIFYPEER, 1L);
  SET(CURLOPT_SSL_VERIFYHOST, 2L);
  if (request->ca_file != NULL) SET(CURLOPT_CAINFO, request->ca_file);
  SET(CURLOPT_NOSIGNAL, 1L);
  SET(CURLOPT_TIMEOUT, request->timeout_seconds);
  SET(CURLOPT_CONNECTTIMEOUT, request->timeout_seconds < 10 ? request->timeout_seconds : 10L);
  SET(CURLOPT_USERAGENT, "backgrounder-otlp-export");
  SET(CURLOPT_HTTPHEADER, headers);
  SET(CURLOPT_POST, 1L);
  SET(CURLOPT_POSTFIELDS, (const char *)request->body);
  SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
  SET(CURLOPT_WRITEFUNCTION, discard);
  result = curl_easy_perform(curl);
  if (result == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
    curl_off_t retry_after = 0;
    if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK
        && retry_after > 0) {
      response->retry_after = (long)retry_after;
    }
  }
done:
  response->curl_code = result;
  if (result != CURLE_OK) {
    snprintf(response->error, sizeof response->error, "%s",
      error[0] != 0 ? error : curl_easy_strerror(result));
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return result;
}
