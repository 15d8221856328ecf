#ifndef BACKGROUNDER_CCURLPOST_H
#define BACKGROUNDER_CCURLPOST_H

#include <stddef.h>

/// One OTLP/HTTP POST: what to send where.
struct bg_post_request {
  /// The full URL (`https://collector.example:4318/v1/traces`).
  const char *url;
  /// The only protocol libcurl may use: "https", or "http" for an http:// endpoint.
  const char *protocol;
  const unsigned char *body;
  size_t body_length;
  /// Header lines, `name: value` (checked by the daemon when it read the configuration).
  const char *const *headers;
  size_t header_count;
  /// A CA bundle to verify the collector with instead of the system store; NULL: the system's.
  const char *ca_file;
  long timeout_seconds;
};

/// What came back.
struct bg_post_response {
  /// The HTTP status; 0 when there was no response.
  long status;
  /// The collector's `Retry-After`, in seconds; -1 when it sent none.
  long retry_after;
  /// libcurl's result (0: a response arrived, whatever its status).
  int curl_code;
  /// libcurl's message when `curl_code` is not 0.
  char error[256];
};

/// Initialises libcurl once, before any `bg_post`; 0 on success.
int bg_post_init(void);

/// Sends `request` (never following a redirect, never without verifying the server's
/// certificate and name) and fills `response`; returns `response->curl_code`.
int bg_post(const struct bg_post_request *request, struct bg_post_response *response);

#endif
