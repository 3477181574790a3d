// Talking to the API with the token the user entered. The token lives in this tab's
// sessionStorage only and is sent only to this origin.
export function apiKit() {
  const TOKEN_KEY = "outboxd.dashboard.token";

  class ApiError extends Error {
    status: number;
    constructor(status: number, message: string) {
      super(message);
      this.status = status;
    }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const setToken = (value: string) => sessionStorage.setItem(TOKEN_KEY, value);
  const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

  /** The JSON answer; a non-2xx answer throws an ApiError carrying the problem's detail. */
  async function request<T>(method: string, path: string, send?: unknown): Promise<T> {
    const response = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${token() ?? ""}`,
        accept: "application/json",
        ...(send === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(send === undefined ? {} : { body: JSON.stringify(send) }),
      cache: "no-store",
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (!response.ok) {
      const detail = (body as { detail?: unknown } | null)?.detail;
      throw new ApiError(response.status, typeof detail === "string" ? detail : `HTTP ${response.status}`);
    }
    return body as T;
  }

  /** A GET per path per refresh: panels that read the same path share one request. */
  function onceEach(): Get {
    const seen = new Map<string, Promise<unknown>>();
    return <T>(path: string): Promise<T> => {
      let answer = seen.get(path);
      if (!answer) {
        answer = request<T>("GET", path);
        seen.set(path, answer);
      }
      return answer as Promise<T>;
    };
  }

  return { ApiError, token, setToken, forgetToken, request, onceEach };
}
export type Api = ReturnType<typeof apiKit>;
export type Get = <T>(path: string) => Promise<T>;
