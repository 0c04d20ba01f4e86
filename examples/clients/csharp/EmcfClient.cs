// Certify one invoice with emcf-gateway, the way an ERP should (C#: the .NET 8 SDK or newer
// with `dotnet run`, or Mono: `mcs -r:System.Net.Http.dll -r:System.Runtime.Serialization.dll
// EmcfClient.cs && mono EmcfClient.exe`). No NuGet package.
//
//   EMCF_URL=http://127.0.0.1:8080 EMCF_KEY=mcf_live_... dotnet run -- [RN]
//
// EMCF_LANG: the language of the person who reads the ERP's messages, fr (the default) or en;
// errorDesc and warningDesc come in it (Accept-Language). Send your user's language, not "en".
//
// 1. POST /api/v1/Invoice with the invoice (rn from the command line, else a new unique one).
// 2. Retry the SAME body (same rn) only when the answer says so: 503 or 409 with Retry-After,
//    waiting Retry-After (longer if it repeats). No answer at all (gateway down, connection
//    cut, timeout): back off exponentially, but first ask GET /api/v1/Invoice/{rn} whether the
//    lost request was certified (200: it was; 404: it was not, send it again). Any other
//    answer is final (README, "Worth a retry?"). A 200 whose body cannot be read is a lost
//    answer too.
// 3. Print the security elements and the OK line (the result: store it), then save the QR
//    code (GET /api/v1/Invoice/{rn}/qr.svg). The gateway also serves the whole fiscal block
//    ready to print: receipt.html (A4 or 80 mm) and receipt.escpos (thermal printers), under
//    the same /api/v1/Invoice/{rn}/.
//
// Last line: OK rn=... codeDEFDGI=... counters="..." nim=... qrSvg=... (qrSvg: where the QR
// code is saved right after that line).
// Exit status: 0 certified, 1 refused (FAIL line), 2 usage, 3 gave up (run again, same rn),
// 4 certified but the QR code not saved (the OK line stands: do NOT certify again; fetch
// qr.svg later).
//
// JSON goes through DataContractJsonSerializer because it is in both .NET and Mono; on .NET
// alone, System.Text.Json's JsonSerializer does the same with the same classes.

using System;
using System.IO;
using System.Net;
using System.Net.Http;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading.Tasks;

namespace Emcf
{
    // The invoice as the gateway reads it (the seed's field names). Amounts are strings, always
    // in CDF, also for a USD invoice (curCode USD, curRate = CDF per USD): convert USD prices.
    [DataContract] public class Invoice
    {
        [DataMember] public string rn;
        [DataMember] public string mode;
        [DataMember] public string type;
        [DataMember] public string curCode;
        [DataMember] public string curRate;
        [DataMember] public Item[] items;
        [DataMember] public Client client;
        [DataMember] public Payment[] payments;
        [DataMember(Name = "operator")] public Operator op;
    }

    [DataContract] public class Item
    {
        [DataMember] public string code, name, type, price, quantity, taxGroup;
    }

    [DataContract] public class Client
    {
        [DataMember] public string nif, type, name, contact, address;
    }

    [DataContract] public class Payment
    {
        [DataMember] public string name, amount, curCode, curRate;
    }

    [DataContract] public class Operator
    {
        [DataMember] public string id, name;
    }

    // What the ERP keeps from a 200 (the answer has more: total, vtotal, groups, sequence...).
    [DataContract] public class Certification
    {
        [DataMember] public string codeDEFDGI, qrCode, counters, nim, dateTime, total, vtotal;
        [DataMember] public Warning[] warnings; // absent unless there is one
    }

    [DataContract] public class Warning
    {
        [DataMember] public int warningCode;
        [DataMember] public string warningDesc;
    }

    [DataContract] public class ApiError
    {
        [DataMember] public int errorCode;
        [DataMember] public string errorDesc;
    }

    class NoAnswer : Exception { public NoAnswer(string m) : base(m) { } } // refused, cut, timed out
    class Refused : Exception { public Refused(string m) : base(m) { } }   // final: do not retry
    class GaveUp : Exception { public GaveUp(string m) : base(m) { } }

    class Answer
    {
        public int Status;
        public TimeSpan? RetryAfter;
        public byte[] Body;
    }

    public static class Program
    {
        const double MaxWait = 60; // seconds, never longer between two tries
        static readonly string Url = (Environment.GetEnvironmentVariable("EMCF_URL") ?? "http://127.0.0.1:8080").TrimEnd('/');
        static readonly string Key = Environment.GetEnvironmentVariable("EMCF_KEY") ?? "";
        static readonly int MaxTries = int.Parse(Environment.GetEnvironmentVariable("EMCF_MAX_TRIES") ?? "8");
        static readonly string OutDir = Environment.GetEnvironmentVariable("EMCF_OUT") ?? ".";
        // The language the ERP's user reads: errorDesc and warningDesc come in it. French by default.
        static readonly string Lang = string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable("EMCF_LANG"))
            ? "fr" : Environment.GetEnvironmentVariable("EMCF_LANG").Trim();
        static readonly Random Jitter = new Random();
        static readonly HttpClient Http = new HttpClient
        {
            // One HTTP exchange; a timeout is a lost answer.
            Timeout = TimeSpan.FromSeconds(double.Parse(
                Environment.GetEnvironmentVariable("EMCF_TIMEOUT") ?? "60",
                System.Globalization.CultureInfo.InvariantCulture)),
        };

        static Invoice NewInvoice(string rn)
        {
            // Two pens at 600.00 CDF, tax group B, prices including tax, paid in cash.
            return new Invoice
            {
                rn = rn, mode = "ttc", type = "FV", curCode = "CDF", curRate = "-1",
                items = new[] { new Item { code = "LR 1515", name = "STYLO BIC", type = "BIE", price = "600.00", quantity = "2", taxGroup = "B" } },
                client = new Client { nif = "A7654321C", type = "PM", name = "CLIENT SARL", contact = "+243 810 000 001", address = "Gombe, Kinshasa" },
                payments = new[] { new Payment { name = "ESPECES", amount = "1200.00", curCode = "CDF", curRate = "-1" } },
                op = new Operator { id = "1", name = "Caisse 1" },
            };
        }

        static byte[] ToJson<T>(T value)
        {
            var stream = new MemoryStream();
            new DataContractJsonSerializer(typeof(T)).WriteObject(stream, value);
            return stream.ToArray();
        }

        static T FromJson<T>(byte[] body) where T : class
        {
            // Not JSON, or not this shape: null (a reader error is an XmlException or a cast).
            try { return (T)new DataContractJsonSerializer(typeof(T)).ReadObject(new MemoryStream(body)); }
            catch (SerializationException) { return null; }
            catch (System.Xml.XmlException) { return null; }
            catch (InvalidCastException) { return null; }
        }

        // One HTTP exchange. Throws NoAnswer when no answer came.
        static async Task<Answer> Call(HttpMethod method, string path, byte[] body)
        {
            var request = new HttpRequestMessage(method, Url + path);
            request.Headers.TryAddWithoutValidation("Authorization", "Bearer " + Key);
            request.Headers.TryAddWithoutValidation("Accept-Language", Lang);
            if (body != null)
            {
                request.Content = new ByteArrayContent(body);
                request.Content.Headers.TryAddWithoutValidation("Content-Type", "application/json");
            }
            try
            {
                using (var response = await Http.SendAsync(request))
                {
                    var retry = response.Headers.RetryAfter;
                    return new Answer
                    {
                        Status = (int)response.StatusCode,
                        RetryAfter = retry == null ? null : retry.Delta,
                        Body = await response.Content.ReadAsByteArrayAsync(),
                    };
                }
            }
            catch (HttpRequestException e) { throw new NoAnswer(e.GetBaseException().Message); }
            catch (OperationCanceledException) { throw new NoAnswer("timed out"); }
            catch (IOException e) { throw new NoAnswer(e.Message); }
        }

        // 1, 2, 4, 8... seconds, capped, with jitter so that tills do not retry together.
        static double Backoff(int tries)
        {
            return Math.Min(MaxWait, Math.Pow(2, tries - 1)) * (0.8 + Jitter.NextDouble() * 0.4);
        }

        static async Task Pause(double seconds, string why)
        {
            seconds = Math.Min(seconds, MaxWait);
            Console.Error.WriteLine(string.Format(System.Globalization.CultureInfo.InvariantCulture,
                "{0}; retrying the same request in {1:0.0} s", why, seconds));
            await Task.Delay(TimeSpan.FromSeconds(seconds));
        }

        static async Task<Certification> Certify(Invoice invoice)
        {
            var body = ToJson(invoice);
            var path = "/api/v1/Invoice/" + Uri.EscapeDataString(invoice.rn);
            string lost = null; // why the last answer was lost: look the rn up before sending it again
            for (var tries = 1; tries <= MaxTries; tries++)
            {
                Answer answer = null;
                if (lost == null)
                {
                    try { answer = await Call(HttpMethod.Post, "/api/v1/Invoice", body); }
                    catch (NoAnswer e) { lost = e.Message; }
                }
                if (lost != null)
                {
                    // Sent or not? Ask by rn before sending it again (the gateway never
                    // certifies an rn twice either way).
                    Console.Error.WriteLine("no answer (" + lost + "); asking GET " + path + " (try " + tries + "/" + MaxTries + ")");
                    lost = null;
                    try { answer = await Call(HttpMethod.Get, path, null); }
                    catch (NoAnswer)
                    {
                        await Pause(Backoff(tries), "the gateway does not answer");
                        continue;
                    }
                    if (answer.Status == 404)
                    {
                        Console.Error.WriteLine("not certified: sending it again");
                        continue;
                    }
                }
                if (answer.Status == 200)
                {
                    var certification = FromJson<Certification>(answer.Body);
                    if (certification != null && !string.IsNullOrEmpty(certification.codeDEFDGI)) return certification;
                    lost = "a 200 whose body cannot be read"; // certified, surely: ask for the result
                    continue;
                }
                var error = FromJson<ApiError>(answer.Body) ?? new ApiError { errorDesc = Encoding.UTF8.GetString(answer.Body) };
                if ((answer.Status == 503 || answer.Status == 409) && answer.RetryAfter.HasValue)
                {
                    // Worth a retry: the same request, after Retry-After (longer if it repeats).
                    var delay = Math.Max(answer.RetryAfter.Value.TotalSeconds, tries > 1 ? Backoff(tries) : 0);
                    await Pause(delay, answer.Status + " errorCode " + error.errorCode + ": " + error.errorDesc);
                    continue;
                }
                throw new Refused("status=" + answer.Status + " errorCode=" + error.errorCode + " errorDesc=" + JsonString(error.errorDesc));
            }
            throw new GaveUp("no result after " + MaxTries + " tries: run again later with rn " + invoice.rn);
        }

        // A text as a JSON string: quoted, with its quotes, backslashes and control characters
        // escaped, every other character as it is (French texts stay readable).
        static string JsonString(string text)
        {
            if (text == null) return "null";
            var json = new StringBuilder("\"");
            foreach (var c in text)
            {
                if (c == '"' || c == '\\') json.Append('\\').Append(c);
                else if (c < ' ') json.Append("\\u").Append(((int)c).ToString("x4"));
                else json.Append(c);
            }
            return json.Append('"').ToString();
        }

        // The QR code to print, as SVG (receipt.html / receipt.escpos give the whole block).
        static async Task SaveQr(string rn, string path)
        {
            var answer = await Call(HttpMethod.Get, "/api/v1/Invoice/" + Uri.EscapeDataString(rn) + "/qr.svg", null);
            if (answer.Status != 200) throw new Refused("qr.svg: status=" + answer.Status);
            File.WriteAllBytes(path, answer.Body);
        }

        static async Task<int> Run(string[] args)
        {
            if (Key == "")
            {
                Console.Error.WriteLine("set EMCF_KEY (and EMCF_URL): EMCF_KEY=mcf_live_... dotnet run -- [RN]");
                return 2;
            }
            var rn = args.Length > 0 ? args[0] : "CS-" + DateTimeOffset.UtcNow.ToUnixTimeSeconds() + "-" + Jitter.Next(1000000).ToString("D6");
            Certification result;
            try
            {
                result = await Certify(NewInvoice(rn));
            }
            catch (Refused e) { Console.WriteLine("FAIL rn=" + rn + " " + e.Message); return 1; }
            catch (GaveUp e) { Console.WriteLine("FAIL rn=" + rn + " " + e.Message); return 3; }
            catch (NoAnswer e) { Console.WriteLine("FAIL rn=" + rn + " " + e.Message); return 3; }
            // Store these with the invoice and print them on it.
            Console.WriteLine("codeDEFDGI: " + result.codeDEFDGI);
            Console.WriteLine("counters: " + result.counters);
            Console.WriteLine("nim: " + result.nim);
            Console.WriteLine("qrCode: " + result.qrCode);
            Console.WriteLine("dateTime: " + result.dateTime);
            Console.WriteLine("total: " + result.total);
            Console.WriteLine("vtotal: " + result.vtotal);
            foreach (var warning in result.warnings ?? new Warning[0])
            {
                // Certified all the same, but show it to a person (e.g. 301: USD amounts sent as CDF).
                Console.WriteLine("WARNING " + warning.warningCode + ": " + warning.warningDesc);
            }
            var qrPath = Path.Combine(OutDir, Regex.Replace(rn, "[^A-Za-z0-9_-]", "_") + "-qr.svg");
            Console.WriteLine("OK rn=" + rn + " codeDEFDGI=" + result.codeDEFDGI + " counters=\"" + result.counters + "\" nim=" + result.nim + " qrSvg=" + qrPath);
            Console.Out.Flush();
            // The invoice is certified whatever happens now: a QR code not saved is no refusal
            // (never certify it again under another rn); the same GET gives it later.
            try
            {
                await SaveQr(rn, qrPath);
            }
            catch (Exception e) when (e is Refused || e is NoAnswer || e is IOException || e is UnauthorizedAccessException)
            {
                Console.Error.WriteLine("WARNING rn=" + rn + " certified, QR code not saved (" + e.Message + "): fetch GET /api/v1/Invoice/" + rn + "/qr.svg later");
                return 4;
            }
            return 0;
        }

        public static int Main(string[] args)
        {
            // French texts (errorDesc, warningDesc) written as UTF-8, whatever the console's default.
            Console.OutputEncoding = new UTF8Encoding(false);
            return Run(args).GetAwaiter().GetResult();
        }
    }
}
