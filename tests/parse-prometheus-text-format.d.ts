/** Types of the parts of `parse-prometheus-text-format` (a Prometheus text format parser) that tests/metrics.test.ts uses. */
declare module "parse-prometheus-text-format" {
  /** One series: a value, or for a histogram its buckets (by `le`), count and sum; numbers as the text has them. */
  export interface ParsedSeries { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }
  /** One metric family: its name, help, type in capitals (GAUGE, COUNTER, HISTOGRAM, …) and series. */
  export interface ParsedFamily { name: string; help: string; type: string; metrics: ParsedSeries[] }
  /** Parses the text exposition format. @throws Error on text that is not in the format. */
  export default function parse(text: string): ParsedFamily[];
}
