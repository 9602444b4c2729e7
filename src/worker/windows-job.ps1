# agent-autoloop: one launch of an agent on Windows, in a Job Object of its own (protocol.md 结构与实测: "PowerShell 建立
# Job Object 管住后代"; the Agent section's stop rule). The run's supervisor (src/worker/supervisor-main.ts) starts
#   powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File windows-job.ps1
# and writes one line to standard input: the launch as base64 of UTF-8 JSON (src/worker/windows-job.ts, JobPayload):
#   application  the program (an absolute path to an .exe or .com: src/sdk/launch.ts resolved it)
#   commandLine  its whole command line, quoted as Node's spawn quotes one (MSVCRT rules)
#   cwd          the folder it runs in
#   keep         the names of this process's environment variables the agent gets; the values are the ones this
#                process was started with (the supervisor gave it the agent's environment)
#   stop         a file: once it exists, the agent and everything it started are ended
#   status       a file this script writes: {"pid":N} once the agent runs, or {"error":"..."} when it could not start
#   stopGraceMs  how long to wait for the job's processes to be gone after ending them
# This text is fixed: the launch is data read here, never pasted into code.
#
# The agent is created suspended, put in a new Job Object that ends every process in it when its last handle closes
# (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, no breakaway allowed), then resumed: it and all its descendants are in the job
# from their first instruction. Its standard output and error are this process's (the run's files), its standard
# input this process's (the supervisor's pipe, at its end once the launch is read). When the agent exits, or the stop
# file appears, the whole job is ended and this script waits until no process of it is left, then exits with the
# agent's exit code (1 when it was stopped). If this process is killed instead, the job's handle closes and Windows
# ends the tree (KILL_ON_JOB_CLOSE).
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'
Set-StrictMode -Version 2.0

$source = @'
using System;
using System.Collections;
using System.Collections.Generic;
using System.ComponentModel;
using System.IO;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace AgentAutoloop
{
    public sealed class JobLaunch
    {
        const uint CreateSuspended = 0x00000004;
        const uint CreateUnicodeEnvironment = 0x00000400;
        const int StartfUseStdHandles = 0x00000100;
        const int JobObjectBasicAccountingInformation = 1;
        const int JobObjectExtendedLimitInformation = 9;
        const uint JobObjectLimitKillOnJobClose = 0x00002000;
        const uint WaitObject0 = 0;
        const uint StoppedExitCode = 1;
        const int PollMs = 100;

        [StructLayout(LayoutKind.Sequential)]
        struct BasicLimitInformation
        {
            public long PerProcessUserTimeLimit;
            public long PerJobUserTimeLimit;
            public uint LimitFlags;
            public UIntPtr MinimumWorkingSetSize;
            public UIntPtr MaximumWorkingSetSize;
            public uint ActiveProcessLimit;
            public UIntPtr Affinity;
            public uint PriorityClass;
            public uint SchedulingClass;
        }

        [StructLayout(LayoutKind.Sequential)]
        struct IoCounters
        {
            public ulong ReadOperationCount;
            public ulong WriteOperationCount;
            public ulong OtherOperationCount;
            public ulong ReadTransferCount;
            public ulong WriteTransferCount;
            public ulong OtherTransferCount;
        }

        [StructLayout(LayoutKind.Sequential)]
        struct ExtendedLimitInformation
        {
            public BasicLimitInformation BasicLimitInformation;
            public IoCounters IoInfo;
            public UIntPtr ProcessMemoryLimit;
            public UIntPtr JobMemoryLimit;
            public UIntPtr PeakProcessMemoryUsed;
            public UIntPtr PeakJobMemoryUsed;
        }

        [StructLayout(LayoutKind.Sequential)]
        struct BasicAccountingInformation
        {
            public long TotalUserTime;
            public long TotalKernelTime;
            public long ThisPeriodTotalUserTime;
            public long ThisPeriodTotalKernelTime;
            public uint TotalPageFaultCount;
            public uint TotalProcesses;
            public uint ActiveProcesses;
            public uint TotalTerminatedProcesses;
        }

        [StructLayout(LayoutKind.Sequential, CharSet = CharSet.Unicode)]
        struct StartupInfo
        {
            public int cb;
            public string lpReserved;
            public string lpDesktop;
            public string lpTitle;
            public int dwX;
            public int dwY;
            public int dwXSize;
            public int dwYSize;
            public int dwXCountChars;
            public int dwYCountChars;
            public int dwFillAttribute;
            public int dwFlags;
            public short wShowWindow;
            public short cbReserved2;
            public IntPtr lpReserved2;
            public IntPtr hStdInput;
            public IntPtr hStdOutput;
            public IntPtr hStdError;
        }

        [StructLayout(LayoutKind.Sequential)]
        struct ProcessInformation
        {
            public IntPtr hProcess;
            public IntPtr hThread;
            public int dwProcessId;
            public int dwThreadId;
        }

        [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
        static extern IntPtr CreateJobObjectW(IntPtr attributes, string name);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool SetInformationJobObject(IntPtr job, int infoClass, ref ExtendedLimitInformation info, uint length);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool QueryInformationJobObject(IntPtr job, int infoClass, out BasicAccountingInformation info, uint length, IntPtr returnLength);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool AssignProcessToJobObject(IntPtr job, IntPtr process);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool TerminateJobObject(IntPtr job, uint exitCode);

        [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
        static extern bool CreateProcessW(string application, StringBuilder commandLine, IntPtr processAttributes, IntPtr threadAttributes,
            bool inheritHandles, uint flags, IntPtr environment, string cwd, ref StartupInfo startup, out ProcessInformation info);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern uint ResumeThread(IntPtr thread);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool TerminateProcess(IntPtr process, uint exitCode);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern uint WaitForSingleObject(IntPtr handle, uint milliseconds);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool GetExitCodeProcess(IntPtr process, out uint exitCode);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern IntPtr GetStdHandle(int which);

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool CloseHandle(IntPtr handle);

        readonly IntPtr job;
        readonly IntPtr process;

        /// <summary>The agent's process id.</summary>
        public readonly int ProcessId;

        JobLaunch(IntPtr job, IntPtr process, int processId)
        {
            this.job = job;
            this.process = process;
            ProcessId = processId;
        }

        /// <summary>The error of the last failed call, named.</summary>
        static Win32Exception Failure(string call)
        {
            int code = Marshal.GetLastWin32Error();
            return new Win32Exception(code, call + ": " + new Win32Exception(code).Message);
        }

        /// <summary>This process's variables named in keep (any case), as a sorted Unicode environment block.</summary>
        static string EnvironmentBlock(string[] keep)
        {
            Dictionary<string, bool> names = new Dictionary<string, bool>(StringComparer.OrdinalIgnoreCase);
            foreach (string name in keep) names[name] = true;
            List<string> entries = new List<string>();
            foreach (DictionaryEntry e in Environment.GetEnvironmentVariables())
            {
                string name = (string)e.Key;
                if (names.ContainsKey(name)) entries.Add(name + "=" + (string)e.Value);
            }
            entries.Sort(StringComparer.OrdinalIgnoreCase);
            StringBuilder block = new StringBuilder();
            foreach (string entry in entries) block.Append(entry).Append('\0');
            if (entries.Count == 0) block.Append('\0');
            return block.ToString();
        }

        /// <summary>Starts the agent suspended, puts it in a new kill-on-close job, then lets it run.</summary>
        public static JobLaunch Start(string application, string commandLine, string cwd, string[] keep)
        {
            IntPtr job = CreateJobObjectW(IntPtr.Zero, null);
            if (job == IntPtr.Zero) throw Failure("CreateJobObject");
            ExtendedLimitInformation limits = new ExtendedLimitInformation();
            limits.BasicLimitInformation.LimitFlags = JobObjectLimitKillOnJobClose;
            if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, ref limits, (uint)Marshal.SizeOf(typeof(ExtendedLimitInformation))))
            {
                Win32Exception e = Failure("SetInformationJobObject");
                CloseHandle(job);
                throw e;
            }
            StartupInfo startup = new StartupInfo();
            startup.cb = Marshal.SizeOf(typeof(StartupInfo));
            startup.dwFlags = StartfUseStdHandles;
            startup.hStdInput = GetStdHandle(-10);
            startup.hStdOutput = GetStdHandle(-11);
            startup.hStdError = GetStdHandle(-12);
            ProcessInformation info;
            IntPtr environment = Marshal.StringToHGlobalUni(EnvironmentBlock(keep));
            bool created;
            Win32Exception createFailure = null;
            try
            {
                created = CreateProcessW(application, new StringBuilder(commandLine, commandLine.Length + 1), IntPtr.Zero, IntPtr.Zero, true,
                    CreateSuspended | CreateUnicodeEnvironment, environment, cwd, ref startup, out info);
                if (!created) createFailure = Failure("CreateProcess " + application);
            }
            finally
            {
                Marshal.FreeHGlobal(environment);
            }
            if (createFailure != null)
            {
                CloseHandle(job);
                throw createFailure;
            }
            if (!AssignProcessToJobObject(job, info.hProcess))
            {
                Win32Exception e = Failure("AssignProcessToJobObject");
                TerminateProcess(info.hProcess, StoppedExitCode);
                CloseHandle(info.hThread);
                CloseHandle(info.hProcess);
                CloseHandle(job);
                throw e;
            }
            if (ResumeThread(info.hThread) == uint.MaxValue)
            {
                Win32Exception e = Failure("ResumeThread");
                TerminateJobObject(job, StoppedExitCode);
                CloseHandle(info.hThread);
                CloseHandle(info.hProcess);
                CloseHandle(job);
                throw e;
            }
            CloseHandle(info.hThread);
            return new JobLaunch(job, info.hProcess, info.dwProcessId);
        }

        /// <summary>Processes of the job still running (0 when none, or when the job cannot be asked).</summary>
        uint ActiveProcesses()
        {
            BasicAccountingInformation accounting;
            if (!QueryInformationJobObject(job, JobObjectBasicAccountingInformation, out accounting, (uint)Marshal.SizeOf(typeof(BasicAccountingInformation)), IntPtr.Zero)) return 0;
            return accounting.ActiveProcesses;
        }

        /// <summary>
        /// Waits for the agent to exit or for the stop file, ends the whole job, waits up to graceMs for its processes
        /// to be gone, and returns the agent's exit code (StoppedExitCode when it was stopped).
        /// </summary>
        public int Wait(string stopFile, int graceMs)
        {
            while (WaitForSingleObject(process, PollMs) != WaitObject0)
            {
                if (File.Exists(stopFile)) break;
            }
            TerminateJobObject(job, StoppedExitCode);
            DateTime deadline = DateTime.UtcNow.AddMilliseconds(graceMs);
            WaitForSingleObject(process, (uint)Math.Max(0, graceMs));
            while (ActiveProcesses() > 0 && DateTime.UtcNow < deadline) Thread.Sleep(PollMs / 2);
            uint code;
            if (!GetExitCodeProcess(process, out code)) code = StoppedExitCode;
            CloseHandle(process);
            CloseHandle(job);
            return unchecked((int)code);
        }
    }
}
'@

$utf8 = New-Object System.Text.UTF8Encoding $false
$status = $null
try {
    $text = [Console]::In.ReadToEnd()
    $launch = ConvertFrom-Json -InputObject ([System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String($text.Trim())))
    $status = [string]$launch.status
    Add-Type -TypeDefinition $source -Language CSharp
    $run = [AgentAutoloop.JobLaunch]::Start([string]$launch.application, [string]$launch.commandLine, [string]$launch.cwd, [string[]]@($launch.keep))
} catch {
    $message = $_.Exception.Message
    if ($status) {
        [System.IO.File]::WriteAllText($status, (ConvertTo-Json -Compress -InputObject @{ error = $message }), $utf8)
    }
    [Console]::Error.WriteLine('agent-autoloop: ' + $message)
    exit 127
}
[System.IO.File]::WriteAllText($status, ('{"pid":' + $run.ProcessId + '}'), $utf8)
$code = $run.Wait([string]$launch.stop, [int]$launch.stopGraceMs)
exit $code
