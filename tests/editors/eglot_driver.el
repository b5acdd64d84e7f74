;;; eglot_driver.el --- what the Emacs/Eglot drivers of tests/editors share  -*- lexical-binding: t -*-

;; Loaded by eglot_rewrite.el (emacs --batch) and eglot_typing.el (emacs -nw in a pseudo-terminal):
;; Debian's Eglot 1.9 activated under -Q, `flowedit lsp' as the Python buffer's server (configured the
;; README's way, through `eglot-server-programs'), the driver's log, what Eglot did with the server's
;; edits, the `flowedit/status' notifications, the rewrite and revert commands, and the end of the run.
;;
;; Env (set by tests/editors/emacs.py):
;;   FLOWEDIT_EMACS_SERVER_CMD  JSON list: the language server command (python -m flowedit.cli lsp ...)
;;   FLOWEDIT_EMACS_SERVER_LOG  file for the server's stderr
;;   FLOWEDIT_EMACS_LOG         the driver's log (-nw has no stderr of its own: the terminal is Emacs's)
;;   FLOWEDIT_EMACS_OUT         where to write the final buffer text
;;   FLOWEDIT_EMACS_SUMMARY     where to write the JSON summary
;;   FLOWEDIT_EMACS_TARGET      the text to rewrite (its first occurrence)

;; Debian's Emacs 28 compiles every .elc it loads natively in the background when HOME is fresh.
(setq native-comp-deferred-compilation nil)
(require 'package)
(setq package-directory-list '("/usr/share/emacs/site-lisp/elpa")) ; -Q leaves it nil
(package-initialize)                    ; activates eglot-1.9 and the project/xref/seq it needs
(require 'eglot)
(require 'cl-lib)
(require 'json)

(defvar flowedit-t0 (float-time))
(defun flowedit-ms () (* 1000 (- (float-time) flowedit-t0)))

(defun flowedit-env (name)
  (or (getenv name) (error "%s is not set" name)))

(defun flowedit-say (fmt &rest args)
  "Append one line to the driver's log."
  (let ((line (format "[%8.1f ms] %s\n" (flowedit-ms) (apply #'format fmt args)))
        (coding-system-for-write 'utf-8-unix))
    (write-region line nil (flowedit-env "FLOWEDIT_EMACS_LOG") 'append 'silent)))

(defvar flowedit-summary nil "Alist written as the JSON summary.")
(defvar flowedit-errors nil "What went wrong in the driver itself (not the server's outcome).")
(defun flowedit-note (key value) (setf (alist-get key flowedit-summary) value))
(defun flowedit-fail (fmt &rest args)
  (let ((what (apply #'format fmt args)))
    (flowedit-say "ERROR %s" what)
    (push what flowedit-errors)))

;; ---------------------------------------------------------------- what Eglot does with our edits
(defvar flowedit-applied 0 "Server edits Eglot applied.")
(defvar flowedit-refused nil "Eglot's errors for the server's edits, newest first.")
(defvar flowedit-did-change 0 "didChange notifications Eglot sent.")
(defvar flowedit-on-apply nil "Functions called with t (applied) or the error message after each server edit.")

(advice-add 'eglot--apply-workspace-edit :around
            (lambda (apply &rest args)
              (condition-case err
                  (prog1 (apply apply args)
                    (cl-incf flowedit-applied)
                    (run-hook-with-args 'flowedit-on-apply t))
                (jsonrpc-error
                 (let ((message (alist-get 'jsonrpc-error-message (cdr err))))
                   (push message flowedit-refused)
                   (run-hook-with-args 'flowedit-on-apply message))
                 (signal (car err) (cdr err)))))
            '((name . flowedit-count)))

(defvar flowedit-on-did-change nil "Functions called as Eglot sends a didChange.")
(advice-add 'eglot--signal-textDocument/didChange :before
            (lambda (&rest _)
              (when eglot--recent-changes
                (cl-incf flowedit-did-change)
                (run-hooks 'flowedit-on-did-change)))
            '((name . flowedit-count)))

;; ---------------------------------------------------------------- flowedit/status
(defvar flowedit-statuses nil "Every `flowedit/status' the server sent, newest first.")
(defvar flowedit-on-status nil "Functions called with each `flowedit/status' (a plist).")

(cl-defmethod eglot-handle-notification (_server (_method (eql flowedit/status)) &rest params)
  (push params flowedit-statuses)
  (run-hook-with-args 'flowedit-on-status params))

(defun flowedit-outcome (id)
  "The request figures of the `flowedit/status' that ended rewrite ID, or nil."
  (cl-loop for status in flowedit-statuses
           for request = (plist-get status :request)
           when (and request (equal (plist-get request :id) id) (plist-get request :outcome))
           return request))

;; ---------------------------------------------------------------- the server and its commands
(defvar flowedit-server nil)
(defvar flowedit-buffer nil "The Python buffer under test.")
(defvar flowedit-original nil "Its text when the driver started.")

(defun flowedit-connect ()
  "Make `flowedit lsp' the Python buffer's server, the way the README configures it, and wait for it."
  (let* ((cmd (json-parse-string (flowedit-env "FLOWEDIT_EMACS_SERVER_CMD") :array-type 'list))
         ;; the server's stderr (its log) in a file of its own
         (wrapped (append '("/bin/sh" "-c" "exec \"$@\" 2>>\"$FLOWEDIT_EMACS_SERVER_LOG\"" "sh") cmd)))
    (add-to-list 'eglot-server-programs (cons '(python-mode) wrapped)) ; 1.9: the mode as a list
    (setq flowedit-buffer (current-buffer)
          flowedit-original (buffer-substring-no-properties (point-min) (point-max)))
    (let ((eglot-sync-connect t))
      (apply #'eglot (eglot--guess-contact)))
    (setq flowedit-server (eglot-current-server))
    (unless (and flowedit-server (jsonrpc-running-p flowedit-server))
      (error "flowedit lsp did not start"))
    (flowedit-note 'emacs emacs-version)
    (flowedit-note 'eglot (package-version-join (package-desc-version (cadr (assq 'eglot package-alist)))))
    (flowedit-say "Emacs %s, Eglot %s: connected to %s" emacs-version
                  (alist-get 'eglot flowedit-summary) (jsonrpc-name flowedit-server))))

(defun flowedit-target-range ()
  "Select the first occurrence of FLOWEDIT_EMACS_TARGET: its LSP range."
  (with-current-buffer flowedit-buffer
    (goto-char (point-min))
    (unless (search-forward (flowedit-env "FLOWEDIT_EMACS_TARGET") nil t)
      (error "the target is not in the buffer"))
    (set-mark (match-beginning 0))      ; the region, as a user would mark it
    (list :start (eglot--pos-to-lsp-position (region-beginning))
          :end (eglot--pos-to-lsp-position (region-end)))))

(defun flowedit-command (name &rest arguments)
  "Run the server's command NAME on ARGUMENTS (a plist) through `eglot-execute-command'.
Returns (RESULT . MILLISECONDS)."
  (let ((asked (float-time)))
    (with-current-buffer flowedit-buffer
      (let ((result (eglot-execute-command flowedit-server name (vector arguments))))
        (cons result (* 1000 (- (float-time) asked)))))))

(defun flowedit-rewrite (range)
  "`flowedit.rewrite' of RANGE, mode replace: the rewrite's id."
  (pcase-let ((`(,result . ,ms)
               (flowedit-command 'flowedit.rewrite :uri (eglot--path-to-uri buffer-file-name)
                                 :range range :mode "replace")))
    (flowedit-say "flowedit.rewrite -> %S (%.1f ms)" result ms)
    (flowedit-note 'rewrite result)
    (flowedit-note 'rewrite_ms ms)
    (plist-get result :id)))

(defun flowedit-revert ()
  "`flowedit.revert' of the buffer; notes its result and how long it took."
  (pcase-let ((`(,result . ,ms)
               (flowedit-command 'flowedit.revert
                                 :uri (eglot--path-to-uri (buffer-file-name flowedit-buffer)))))
    (flowedit-say "flowedit.revert -> %S (%.1f ms)" result ms)
    (flowedit-note 'revert result)
    (flowedit-note 'revert_ms ms)
    (flowedit-note 'after_revert (flowedit-text))
    result))

(defun flowedit-text ()
  (with-current-buffer flowedit-buffer (buffer-substring-no-properties (point-min) (point-max))))

;; ---------------------------------------------------------------- the end of the run
(defvar flowedit-written nil)
(defun flowedit-write-out ()
  "Write the buffer, the summary, *Messages* and Eglot's events buffer (once; also when Emacs is killed)."
  (unless flowedit-written
    (setq flowedit-written t)
    (let ((coding-system-for-write 'utf-8-unix)
          (summary (flowedit-env "FLOWEDIT_EMACS_SUMMARY")))
      (when (buffer-live-p flowedit-buffer)
        (with-current-buffer flowedit-buffer
          (write-region (point-min) (point-max) (flowedit-env "FLOWEDIT_EMACS_OUT") nil 'silent)))
      (flowedit-note 'applied flowedit-applied)
      (flowedit-note 'refused (length flowedit-refused))
      (flowedit-note 'refusals (vconcat (seq-take (reverse flowedit-refused) 3)))
      (flowedit-note 'did_change flowedit-did-change)
      (flowedit-note 'errors (vconcat (reverse flowedit-errors)))
      (flowedit-note 'total_ms (flowedit-ms))
      (write-region (json-encode flowedit-summary) nil summary nil 'silent)
      (with-current-buffer (messages-buffer)
        (write-region (point-min) (point-max) (concat summary ".messages") nil 'silent))
      (when flowedit-server
        (with-current-buffer (jsonrpc-events-buffer flowedit-server)
          (write-region (point-min) (point-max) (concat summary ".events") nil 'silent))))))
(add-hook 'kill-emacs-hook #'flowedit-write-out) ; the test terminates an Emacs that does not get through

(defun flowedit-finish ()
  "Write everything out, stop the server and exit: 0 if the driver got through."
  (flowedit-write-out)
  (when flowedit-server
    (ignore-errors (let ((eglot-autoreconnect nil)) (eglot-shutdown flowedit-server))))
  (flowedit-say "done, %d error(s)" (length flowedit-errors))
  (kill-emacs (if flowedit-errors 1 0)))

(provide 'eglot_driver)
;;; eglot_driver.el ends here
