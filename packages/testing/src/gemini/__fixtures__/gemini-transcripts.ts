/**
 * Recorded-style Gemini API transcripts (`streamGenerateContent?alt=sse` and `generateContent`),
 * written from Google's public API reference: each SSE event a whole GenerateContentResponse,
 * lines ending CRLF as Google's frontends send them, no terminator event. Ids and counts are
 * made up. Adapters' stream tests run on them; the fake's own output is checked against them.
 */

/** Google's frontends end every SSE line with CRLF. */
const sse = (events: string[]) => events.map((event) => `${event}\r\n\r\n`).join('');

/** A text reply after thinking: thoughts reported apart, the finish in a last event with empty text. */
export const textStream = sse([
  `data: {"candidates":[{"content":{"parts":[{"text":"Hello! How"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":350,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"thoughtsTokenCount":341},"modelVersion":"gemini-2.5-flash","responseId":"kZ0iafm7JvyRz7IP8cmXoQg"}`,
  `data: {"candidates":[{"content":{"parts":[{"text":" can I help you today?"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":350,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"thoughtsTokenCount":341},"modelVersion":"gemini-2.5-flash","responseId":"kZ0iafm7JvyRz7IP8cmXoQg"}`,
  `data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":8,"totalTokenCount":358,"promptTokensDetails":[{"modality":"TEXT","tokenCount":9}],"thoughtsTokenCount":341},"modelVersion":"gemini-2.5-flash","responseId":"kZ0iafm7JvyRz7IP8cmXoQg"}`,
]);

/** Two parallel function calls in one event (Gemini 3): only the first carries a thought signature. */
export const functionCallStream = sse([
  `data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CiQB0e2Kb7pQ2cXxFakeSignatureAAAA"},{"functionCall":{"name":"get_weather","args":{"city":"Tokyo","unit":"celsius"}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":56,"candidatesTokenCount":30,"totalTokenCount":206,"promptTokensDetails":[{"modality":"TEXT","tokenCount":56}],"thoughtsTokenCount":120},"modelVersion":"gemini-3-pro-preview","responseId":"x50iacGQBvqAz7IPs8TJ6Qs"}`,
]);

/** A blocked prompt: promptFeedback.blockReason and no candidates. */
export const blockedPromptStream = sse([
  `data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":14,"totalTokenCount":14,"promptTokensDetails":[{"modality":"TEXT","tokenCount":14}]},"modelVersion":"gemini-2.5-flash","responseId":"b10iaYyBAqKSz7IPsLzSgQ0"}`,
]);

/** A safety stop after some text: the last candidate has no parts and finishReason SAFETY. */
export const safetyStream = sse([
  `data: {"candidates":[{"content":{"parts":[{"text":"Here is how"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":11,"totalTokenCount":11,"promptTokensDetails":[{"modality":"TEXT","tokenCount":11}]},"modelVersion":"gemini-2.5-flash","responseId":"c20iaYyBAqKSz7IPsLzSgQ1"}`,
  `data: {"candidates":[{"content":{"role":"model"},"finishReason":"SAFETY","index":0,"safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true}]}],"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":3,"totalTokenCount":14,"promptTokensDetails":[{"modality":"TEXT","tokenCount":11}]},"modelVersion":"gemini-2.5-flash","responseId":"c20iaYyBAqKSz7IPsLzSgQ1"}`,
]);

/** An error object arriving as an event of a 200 stream. */
export const errorStream = sse([
  `data: {"candidates":[{"content":{"parts":[{"text":"Once upon"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7,"promptTokensDetails":[{"modality":"TEXT","tokenCount":7}]},"modelVersion":"gemini-2.5-flash","responseId":"d30iaYyBAqKSz7IPsLzSgQ2"}`,
  `data: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`,
]);

/** A `generateContent` reply of an image model: a draft image marked as a thought, then the image. */
export const imageResponse = `{
  "candidates": [
    {
      "content": {
        "parts": [
          {
            "inlineData": {
              "mimeType": "image/png",
              "data": "iVBORw0KGgoDRAFT"
            },
            "thought": true
          },
          {
            "inlineData": {
              "mimeType": "image/png",
              "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
            }
          }
        ],
        "role": "model"
      },
      "finishReason": "STOP",
      "index": 0
    }
  ],
  "usageMetadata": {
    "promptTokenCount": 7,
    "candidatesTokenCount": 1290,
    "totalTokenCount": 1297,
    "promptTokensDetails": [
      {
        "modality": "TEXT",
        "tokenCount": 7
      }
    ],
    "candidatesTokensDetails": [
      {
        "modality": "IMAGE",
        "tokenCount": 1290
      }
    ]
  },
  "modelVersion": "gemini-2.5-flash-image",
  "responseId": "e40iaYyBAqKSz7IPsLzSgQ3"
}`;
