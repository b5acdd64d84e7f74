;;; flowedit_el_driver.el --- emacs -nw driver for tests/editors/test_emacs_package.py  -*- lexical-binding: t -*-

;; Usage: emacs -nw -Q -l CONFIG file.py -l tests/editors/flowedit_el_driver.el, in a pseudo-terminal whose
;; other end is the test.  CONFIG is the configuration docs/editors.md gives for editors/emacs/flowedit.el,
;; loaded like a user's init file (before the file); the user is the test, pressing the package's keys
;; (C-c f r, C-c f k, ...), typing instructions in the minibuffer, undo (C-_), completion (C-M-i).  The
;; driver only adds keys that do what a user's eyes and hands would: C-c t marks the target (the first
;; occurrence of FLOWEDIT_EMACS_TARGET), C-c e goes to the end of the buffer's last line, C-c p puts point
;; after the first occurrence of FLOWEDIT_EMACS_AFTER, C-c s tells the buffer's text, C-c g what Flymake
;; shows (C-c h: in the current buffer), C-c l lists the project's diagnostics (M-x
;; flymake-show-project-diagnostics) and tells its rows, C-c q writes everything and exits.  It tells what happens as JSON lines on the control connection
;; (127.0.0.1, FLOWEDIT_EMACS_CONTROL): ready, edit (each streamed edit applied, with its time), outcome,
;; review (a review's end), minibuffer (its prompt, once open), text, flymake, flymake-here,
;; project-diagnostics.
;; Env: FLOWEDIT_EMACS_LOG, FLOWEDIT_EMACS_OUT, FLOWEDIT_EMACS_SUMMARY, FLOWEDIT_EMACS_TARGET (see emacs.py).

(require 'cl-lib)
(require 'json)

(defvar fet-t0 (float-time))
(defun fet-ms () (* 1000 (- (float-time) fet-t0)))
(defun fet-env (name) (or (getenv name) (error "%s is not set" name)))
(defun fet-say (fmt &rest args)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region (format "[%8.1f ms] %s\n" (fet-ms) (apply #'format fmt args)) nil
                  (fet-env "FLOWEDIT_EMACS_LOG") 'append 'silent)))

(defvar fet-control nil)
(defvar fet-buffer (current-buffer) "The file's buffer (current when the driver loads).")
(defvar fet-errors nil)
(defvar fet-summary nil)

(defun fet-tell (event &rest data)
  (process-send-string fet-control (concat (json-encode (append (list :event event) data)) "\n")))

(defun fet-text ()
  (with-current-buffer fet-buffer (buffer-substring-no-properties (point-min) (point-max))))

(defmacro fet-guarded (&rest body)
  `(condition-case err (progn ,@body)
     (error (push (format "%S" err) fet-errors)
            (fet-say "ERROR %S" err)
            (fet-tell "error" :error (format "%S" err)))))

;; what the package does, told to the test
(defvar fet-refused 0 "Server edits the package refused (for another version than the buffer's).")
(advice-add 'flowedit--apply-workspace-edit :filter-return
            (lambda (answer)
              (unless (eq (plist-get answer :applied) t)
                (setq fet-refused (1+ fet-refused))
                (fet-tell "refused" :reason (plist-get answer :failureReason)))
              answer))
(add-hook 'flowedit-edit-functions
          (lambda (id) (fet-tell "edit" :id id :ms (fet-ms))))
(defvar fet-told-outcome (make-hash-table :test #'equal))
(add-hook 'flowedit-status-functions
          (lambda (status)
            (let ((request (plist-get status :request)))
              (when (and request (equal (plist-get request :kind) "rewrite") (plist-get request :outcome)
                         (not (gethash (plist-get request :id) fet-told-outcome)))
                (puthash (plist-get request :id) t fet-told-outcome)
                ;; (after the handler: the buffer has every edit the server sent before this status)
                (run-at-time 0 nil (lambda () (fet-tell "outcome" :request request :text (fet-text))))))
            (let ((review (plist-get status :review)))
              (when (and review (not (equal (plist-get review :state) "reviewing"))
                         (not (gethash (plist-get review :id) fet-told-outcome)))
                (puthash (plist-get review :id) t fet-told-outcome)
                (run-at-time 0 nil (lambda () (fet-tell "review" :review review)))))
            (let ((line (with-current-buffer fet-buffer (flowedit-mode-line))))
              (when (string-match-p "streaming [0-9]+ tok" line)
                (setf (alist-get 'mode_line fet-summary) line))
              (when (string-match-p "reviewing" line)
                (setf (alist-get 'review_mode_line fet-summary) line)))))

(add-hook 'flowedit-next-edit-functions
          (lambda (params)
            ;; (after the handler: its overlays are in the buffer)
            (run-at-time 0 nil
                         (lambda ()
                           (with-current-buffer fet-buffer
                             (fet-tell "next-edit" :cleared (plist-get params :cleared)
                                       :shown (if flowedit--next-edit t :json-false)
                                       :overlays (vconcat
                                                  (mapcar (lambda (o)
                                                            (list :start (overlay-start o) :end (overlay-end o)
                                                                  :old (buffer-substring-no-properties
                                                                        (overlay-start o) (overlay-end o))
                                                                  :face (symbol-name (or (overlay-get o 'face) 'none))
                                                                  :after (overlay-get o 'after-string)))
                                                          flowedit--next-edit-overlays))
                                       :text (fet-text) :point (point)))))))

(defun fet-mark-target ()
  (interactive)
  (fet-guarded
   (goto-char (point-min))
   (search-forward (fet-env "FLOWEDIT_EMACS_TARGET"))
   (push-mark (match-beginning 0) t t)   ; the region, active, as C-SPC and moving would make it
   (fet-tell "marked")))

(defun fet-end () (interactive) (goto-char (point-max)) (skip-chars-backward "\n") (fet-tell "at-end"))

(defun fet-after ()
  (interactive)
  (fet-guarded
   (goto-char (point-min))
   (search-forward (fet-env "FLOWEDIT_EMACS_AFTER"))
   (fet-tell "placed")))

(defun fet-snapshot () (interactive) (fet-tell "text" :text (fet-text)))

(defun fet-diagnostics (buffer)
  "What Flymake shows in BUFFER: each diagnostic's lines, type and text."
  (with-current-buffer buffer
    (vconcat (mapcar (lambda (d)
                       (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                             :end_line (line-number-at-pos (flymake-diagnostic-end d))
                             :type (symbol-name (flymake-diagnostic-type d))
                             :text (flymake-diagnostic-text d)))
                     (sort (flymake-diagnostics (point-min) (point-max))
                           (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b))))))))

(defun fet-flymake () (interactive) (fet-tell "flymake" :diagnostics (fet-diagnostics fet-buffer)))

(defun fet-flymake-here ()
  "Tell what Flymake shows in the current buffer (a file the user opened), and the file's name."
  (interactive)
  (fet-tell "flymake-here" :file (file-name-nondirectory (or buffer-file-name "")) :diagnostics
            (fet-diagnostics (current-buffer))))

(defun fet-project-diagnostics ()
  "M-x flymake-show-project-diagnostics; tell the rows it lists: file, line, text."
  (interactive)
  (fet-guarded
   (flymake-show-project-diagnostics)
   (with-current-buffer (flymake--project-diagnostics-buffer (project-root (project-current)))
     (goto-char (point-min))
     (let (rows)
       (while (not (eobp))
         (let ((row (tabulated-list-get-entry)))
           (when row
             (push (list :file (car (aref row 0)) :line (string-to-number (aref row 1)) :text (car (aref row 5)))
                   rows)))
         (forward-line 1))
       (fet-tell "project-diagnostics" :rows (vconcat (nreverse rows)))))))

(add-hook 'minibuffer-setup-hook
          (lambda () (fet-tell "minibuffer" :prompt (minibuffer-prompt))))

(add-hook 'flowedit-check-setup-hook
          (lambda () (fet-tell "checked" :verdict (symbol-name flowedit-check-verdict)
                               :text (buffer-substring-no-properties (point-min) (point-max)))))

;; every change of the buffer, told (coalesced) without a key: a key would cancel a pending completion
(defvar fet-change-timer nil)
(with-current-buffer fet-buffer
  (add-hook 'after-change-functions
            (lambda (&rest _)
              (unless (timerp fet-change-timer)
                (setq fet-change-timer
                      (run-at-time 0.01 nil (lambda () (setq fet-change-timer nil)
                                              (fet-tell "changed" :text (fet-text)))))))
            nil t))

(defun fet-write-out ()
  (let ((coding-system-for-write 'utf-8-unix)
        (summary (fet-env "FLOWEDIT_EMACS_SUMMARY")))
    (when (buffer-live-p fet-buffer)
      (with-current-buffer fet-buffer
        (write-region (point-min) (point-max) (fet-env "FLOWEDIT_EMACS_OUT") nil 'silent)))
    (setf (alist-get 'errors fet-summary) (vconcat (reverse fet-errors)))
    (setf (alist-get 'refused fet-summary) fet-refused)
    (setf (alist-get 'emacs fet-summary) emacs-version)
    (setf (alist-get 'eglot fet-summary)
          (package-version-join (package-desc-version (cadr (assq 'eglot package-alist)))))
    (with-current-buffer (messages-buffer)
      (setf (alist-get 'messages fet-summary) (buffer-substring-no-properties (point-min) (point-max)))
      (write-region (point-min) (point-max) (concat summary ".messages") nil 'silent))
    (write-region (json-encode fet-summary) nil summary nil 'silent)
    (let ((server (with-current-buffer fet-buffer (eglot-current-server))))
      (when server
        (with-current-buffer (jsonrpc-events-buffer server)
          (write-region (point-min) (point-max) (concat summary ".events") nil 'silent))))))

(defun fet-quit ()
  (interactive)
  (fet-write-out)
  (let ((server (with-current-buffer fet-buffer (eglot-current-server))))
    (when server (ignore-errors (let ((eglot-autoreconnect nil)) (eglot-shutdown server)))))
  (kill-emacs (if fet-errors 1 0)))

(global-set-key (kbd "C-c t") #'fet-mark-target)
(global-set-key (kbd "C-c e") #'fet-end)
(global-set-key (kbd "C-c p") #'fet-after)
(global-set-key (kbd "C-c s") #'fet-snapshot)
(global-set-key (kbd "C-c g") #'fet-flymake)
(global-set-key (kbd "C-c h") #'fet-flymake-here)
(global-set-key (kbd "C-c l") #'fet-project-diagnostics)
(global-set-key (kbd "C-c q") #'fet-quit)

(defun fet-wait-for-server (tries)
  "Tell `ready' once Eglot manages the buffer with flowedit (it connects after the first command)."
  (with-current-buffer fet-buffer
    (cond ((and (bound-and-true-p flowedit-mode) (eglot-current-server))
           (fet-tell "ready" :idle_time eglot-send-changes-idle-time
                     :server (symbol-name (eieio-object-class (eglot-current-server)))
                     ;; what the server chose (Eglot 1.9 offers none: UTF-16, LSP's default)
                     :encoding (plist-get (eglot--capabilities (eglot-current-server)) :positionEncoding)
                     :mode_line (flowedit-mode-line)))
          ((> tries 0) (run-at-time 0.02 nil #'fet-wait-for-server (1- tries)))
          (t (push "Eglot did not connect the buffer to flowedit" fet-errors)
             (fet-tell "error" :error "Eglot did not connect the buffer to flowedit")))))

(condition-case err
    (progn
      (setq fet-control
            (make-network-process :name "fet-control" :host "127.0.0.1" :noquery t
                                  :service (string-to-number (fet-env "FLOWEDIT_EMACS_CONTROL"))))
      (fet-tell "loaded" :mode (symbol-name major-mode))
      (fet-wait-for-server 750))
  (error (push (format "%S" err) fet-errors)
         (fet-quit)))
;;; flowedit_el_driver.el ends here
